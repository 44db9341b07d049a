//! The interpreter's heap: structs, arrays and strings behind integer handles.
//!
//! A reference value is an `i64` handle; 0 is `null` for every reference type.
//! The static types tell which kind of object a handle names, so each kind has
//! its own handle space:
//! - a struct handle `h` names the field slots `fields[h - 1 ..][..n]` of one
//!   arena (every struct gets at least one slot, so distinct structs have
//!   distinct handles, as distinct allocations have distinct addresses);
//! - an array handle `h` names `arrays[h - 1]`, stored at its element type's
//!   width (`i64` and references 8 bytes, `i32` 4, `u8`/`bool` 1), so the
//!   interpreter's memory use matches compiled code's;
//! - a `str` handle `h` names `strs[h - 1]`, read-only bytes.
//!
//! Out of memory: an allocation traps `out of memory` exactly where
//! compiled code's does — when the array's size `8 + len * elem_size`
//! overflows (as in the runtime's `pare_new_array`), or when the allocator
//! refuses the memory, as `mmap` (freestanding) or `calloc` (libc) refuses
//! it in compiled code. There is no limit of the interpreter's own: a
//! program the JIT and the executables run (two 3 GB arrays, one of 4 GiB)
//! runs here too. Each array is one zeroed allocation at its element type's
//! width, so untouched pages cost nothing, as with `mmap` and `calloc`; the
//! struct arena grows by a fallible reservation, so a refusal is the trap,
//! never an abort of the interpreter.

use crate::tir::{TrapKind, Ty};
use std::alloc::{alloc_zeroed, Layout};

/// The elements of one array, at their type's width.
enum Elems {
    /// `i64` and reference elements.
    Wide(Vec<i64>),
    /// `i32` elements.
    Half(Vec<i32>),
    /// `u8` and `bool` elements.
    Bytes(Vec<u8>),
}

impl Elems {
    fn len(&self) -> usize {
        match self {
            Elems::Wide(v) => v.len(),
            Elems::Half(v) => v.len(),
            Elems::Bytes(v) => v.len(),
        }
    }
}

#[derive(Default)]
pub struct Heap {
    fields: Vec<i64>,
    arrays: Vec<Elems>,
    strs: Vec<Box<[u8]>>,
}

/// An element storage class and its size in bytes, from the element type.
fn storage_of(elem: &Ty) -> (u64, fn(usize) -> Option<Elems>) {
    match elem {
        Ty::I32 => (4, |n| zeroed_vec::<i32>(n).map(Elems::Half)),
        Ty::U8 | Ty::Bool => (1, |n| zeroed_vec::<u8>(n).map(Elems::Bytes)),
        _ => (8, |n| zeroed_vec::<i64>(n).map(Elems::Wide)),
    }
}

/// A vector of `n` zero integers, or `None` if the allocator refuses (instead of
/// aborting the process as `vec![0; n]` would).
fn zeroed_vec<T: Copy>(n: usize) -> Option<Vec<T>> {
    if n == 0 {
        return Some(Vec::new());
    }
    let layout = Layout::array::<T>(n).ok()?;
    // SAFETY: `layout` has a non-zero size (n > 0 and T is an integer type of
    // non-zero size). The memory is zeroed, and all-zero bytes are a valid `T`
    // for the integer types this is used with. `Vec::from_raw_parts` gets the
    // pointer from the global allocator with exactly `Layout::array::<T>(n)`,
    // which is what the vector will deallocate with (capacity n).
    unsafe {
        let ptr = alloc_zeroed(layout) as *mut T;
        if ptr.is_null() {
            return None;
        }
        Some(Vec::from_raw_parts(ptr, n, n))
    }
}

#[inline]
fn slot(handle: i64) -> Result<usize, TrapKind> {
    if handle == 0 {
        Err(TrapKind::NullDereference)
    } else {
        Ok((handle - 1) as usize)
    }
}

/// An element index checked against a length.
#[inline]
fn element_index(index: i64, len: usize) -> Result<usize, TrapKind> {
    if index < 0 || index as u64 >= len as u64 {
        Err(TrapKind::IndexOutOfBounds)
    } else {
        Ok(index as usize)
    }
}

impl Heap {
    /// A new struct with `num_fields` zero fields.
    pub fn new_struct(&mut self, num_fields: usize) -> Result<i64, TrapKind> {
        let slots = num_fields.max(1);
        self.fields
            .try_reserve(slots)
            .map_err(|_| TrapKind::OutOfMemory)?;
        let handle = self.fields.len() as i64 + 1;
        self.fields.resize(self.fields.len() + slots, 0);
        Ok(handle)
    }

    #[inline]
    pub fn field(&self, handle: i64, index: u32) -> Result<i64, TrapKind> {
        let base = slot(handle)?;
        Ok(self.fields[base + index as usize])
    }

    #[inline]
    pub fn set_field(&mut self, handle: i64, index: u32, value: i64) -> Result<(), TrapKind> {
        let base = slot(handle)?;
        self.fields[base + index as usize] = value;
        Ok(())
    }

    /// `new [elem; len]`: traps on a negative length, on a size computation
    /// that overflows, and when the allocator refuses the memory.
    pub fn new_array(&mut self, elem: &Ty, len: i64) -> Result<i64, TrapKind> {
        if len < 0 {
            return Err(TrapKind::NegativeLength);
        }
        let (elem_size, make) = storage_of(elem);
        (len as u64)
            .checked_mul(elem_size)
            .and_then(|b| b.checked_add(8))
            .filter(|&b| b <= i64::MAX as u64)
            .ok_or(TrapKind::OutOfMemory)?;
        self.arrays
            .try_reserve(1)
            .map_err(|_| TrapKind::OutOfMemory)?;
        let elems = usize::try_from(len)
            .ok()
            .and_then(make)
            .ok_or(TrapKind::OutOfMemory)?;
        self.arrays.push(elems);
        Ok(self.arrays.len() as i64)
    }

    /// A global's static array, with the given (normalized) elements; static
    /// data is not charged against the heap limit.
    pub fn static_array(&mut self, elem: &Ty, values: &[i64]) -> i64 {
        let elems = match elem {
            Ty::I32 => Elems::Half(values.iter().map(|&v| v as i32).collect()),
            Ty::U8 | Ty::Bool => Elems::Bytes(values.iter().map(|&v| v as u8).collect()),
            _ => Elems::Wide(values.to_vec()),
        };
        self.arrays.push(elems);
        self.arrays.len() as i64
    }

    #[inline]
    pub fn array_len(&self, handle: i64) -> Result<i64, TrapKind> {
        Ok(self.arrays[slot(handle)?].len() as i64)
    }

    /// Reads element `index`, extended back to an `i64` per the storage
    /// (sign-extended `i32`, zero-extended bytes).
    #[inline]
    pub fn element(&self, handle: i64, index: i64) -> Result<i64, TrapKind> {
        Ok(match &self.arrays[slot(handle)?] {
            Elems::Wide(v) => v[element_index(index, v.len())?],
            Elems::Half(v) => v[element_index(index, v.len())?] as i64,
            Elems::Bytes(v) => v[element_index(index, v.len())?] as i64,
        })
    }

    /// Writes element `index`, truncating the value to the storage width.
    #[inline]
    pub fn set_element(&mut self, handle: i64, index: i64, value: i64) -> Result<(), TrapKind> {
        let elems = &mut self.arrays[slot(handle)?];
        let i = element_index(index, elems.len())?;
        match elems {
            Elems::Wide(v) => v[i] = value,
            Elems::Half(v) => v[i] = value as i32,
            Elems::Bytes(v) => v[i] = value as u8,
        }
        Ok(())
    }

    /// Adds read-only string bytes; the caller interns literals.
    pub fn new_str(&mut self, bytes: &[u8]) -> i64 {
        self.strs.push(bytes.into());
        self.strs.len() as i64
    }

    #[inline]
    pub fn str_bytes(&self, handle: i64) -> Result<&[u8], TrapKind> {
        Ok(&self.strs[slot(handle)?])
    }

    #[inline]
    pub fn str_byte(&self, handle: i64, index: i64) -> Result<i64, TrapKind> {
        let bytes = self.str_bytes(handle)?;
        Ok(bytes[element_index(index, bytes.len())?] as i64)
    }
}

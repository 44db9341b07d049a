//! Type helpers that need no name resolution: printing types the way
//! diagnostics and symbol names spell them, and struct layout.

use crate::tir::Ty;

/// Spells a type as in source (`i64`, `[u8]`, `util::Point`); `struct_names`
/// gives each struct's qualified name. Unit is `()`, the type of `null` is
/// `null` and the never type (also the checker's error type) is `!`.
pub fn ty_name(ty: &Ty, struct_names: &[String]) -> String {
    match ty {
        Ty::I64 => "i64".into(),
        Ty::I32 => "i32".into(),
        Ty::U8 => "u8".into(),
        Ty::Bool => "bool".into(),
        Ty::Str => "str".into(),
        Ty::Unit => "()".into(),
        Ty::Null => "null".into(),
        Ty::Never => "!".into(),
        Ty::Struct(id) => struct_names
            .get(id.0 as usize)
            .cloned()
            .unwrap_or_else(|| "?".into()),
        Ty::Array(elem) => format!("[{}]", ty_name(elem, struct_names)),
    }
}

/// Lays out fields in declaration order at natural alignment (each scalar
/// aligned to its size, references to 8). Returns the field offsets and the
/// allocation size: rounded up to the largest alignment and at least 1, so
/// that every `new S {}` is a distinct non-null allocation.
pub fn layout(fields: &[Ty]) -> (Vec<u32>, u32) {
    let mut offsets = Vec::with_capacity(fields.len());
    let mut end = 0u32;
    let mut max_align = 1u32;
    for ty in fields {
        let align = ty.size().max(1);
        max_align = max_align.max(align);
        end = end.div_ceil(align) * align;
        offsets.push(end);
        end += ty.size();
    }
    let size = (end.div_ceil(max_align) * max_align).max(1);
    (offsets, size)
}

/// Whether two types are compatible where a value of `have` is used as a
/// `want`: equal, or one of them never produces a value (the checker's error
/// type too), or `null` meeting a reference type.
pub fn compatible(have: &Ty, want: &Ty) -> bool {
    have == want
        || matches!(have, Ty::Never)
        || matches!(want, Ty::Never)
        || (matches!(have, Ty::Null) && want.is_reference())
        || (matches!(want, Ty::Null) && have.is_reference())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tir::StructId;

    #[test]
    fn names() {
        let names = vec!["util::Point".to_string()];
        assert_eq!(ty_name(&Ty::Array(Box::new(Ty::U8)), &names), "[u8]");
        assert_eq!(
            ty_name(&Ty::Array(Box::new(Ty::Struct(StructId(0)))), &names),
            "[util::Point]"
        );
        assert_eq!(ty_name(&Ty::Unit, &names), "()");
    }

    #[test]
    fn natural_alignment() {
        assert_eq!(layout(&[]), (vec![], 1));
        assert_eq!(layout(&[Ty::U8]), (vec![0], 1));
        assert_eq!(layout(&[Ty::U8, Ty::I64]), (vec![0, 8], 16));
        assert_eq!(layout(&[Ty::I64, Ty::U8]), (vec![0, 8], 16));
        assert_eq!(
            layout(&[Ty::U8, Ty::I32, Ty::Bool, Ty::Str]),
            (vec![0, 4, 8, 16], 24)
        );
        assert_eq!(layout(&[Ty::U8, Ty::Bool, Ty::I32]), (vec![0, 1, 4], 8));
    }

    #[test]
    fn compatibility() {
        assert!(compatible(&Ty::Null, &Ty::Str));
        assert!(compatible(&Ty::Never, &Ty::I64));
        assert!(!compatible(&Ty::Null, &Ty::I64));
        assert!(!compatible(&Ty::I32, &Ty::I64));
    }
}

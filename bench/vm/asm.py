#!/usr/bin/env python3
"""Assembler for the bench/vm stack machine. Prints the encoded program as an
array-literal body; main.pare and vm.c embed its output verbatim."""

OPS = {"halt": 0, "push": 1, "load": 2, "store": 3, "add": 4, "sub": 5, "mul": 6,
       "div": 7, "mod": 8, "lt": 9, "gt": 10, "eq": 11, "jmp": 12, "jz": 13,
       "jnz": 14, "print": 15, "dup": 16, "pop": 17, "swap": 18, "inc": 19,
       "call": 20, "ret": 21}
SLOTS = {"n": 0, "d": 1, "count": 2, "sum": 3, "x": 4, "steps": 5, "best": 6, "bestn": 7,
         "a": 8, "b": 9, "t": 10}

SRC = """
; primes below 2000: count and sum, by trial division
    push 2; store n; push 0; store count; push 0; store sum
outer:
    load n; push 2000; lt; jz done1
    push 2; store d
inner:
    load d; load d; mul; load n; gt; jnz prime
    load n; load d; mod; jz next
    inc d; jmp inner
prime:
    inc count; load sum; load n; add; store sum
next:
    inc n; jmp outer
done1:
    load count; print; load sum; print
; longest Collatz chain for starts below 1500
    push 1; store n; push 0; store best; push 0; store bestn
c_outer:
    load n; push 1500; lt; jz c_done
    load n; store x; push 0; store steps
c_loop:
    load x; push 1; eq; jnz c_end
    load x; push 2; mod; jz even
    load x; push 3; mul; push 1; add; store x; jmp c_count
even:
    load x; push 2; div; store x
c_count:
    inc steps; jmp c_loop
c_end:
    load steps; load best; gt; jz c_next
    load steps; store best; load n; store bestn
c_next:
    inc n; jmp c_outer
c_done:
    load best; print; load bestn; print
; gcd checksum over pairs (a, b) with a, b below 60
    push 0; store sum; push 1; store a
g_outer:
    load a; push 60; lt; jz g_done
    push 1; store b
g_inner:
    load b; push 60; lt; jz g_next_a
    load a; store x; load b; store t
g_loop:
    load t; push 0; eq; jnz g_found
    load x; load t; mod; load t; store x; store t; jmp g_loop
g_found:
    load sum; load x; add; store sum
    inc b; jmp g_inner
g_next_a:
    inc a; jmp g_outer
g_done:
    load sum; print
; recursive Fibonacci through call/ret
    push 21; call fib; print
    push 0; push 5; sub; push 3; div; print
    push 0; push 7; sub; push 3; mod; print
    halt
fib:
    dup; push 2; lt; jnz fib_ret
    dup; push 1; sub; call fib
    swap; push 2; sub; call fib
    add
fib_ret:
    ret
"""

def assemble(src):
    instrs, labels = [], {}
    for line in src.splitlines():
        line = line.split(";;")[0].strip()
        if not line or line.startswith(";"):
            continue
        if line.endswith(":"):
            labels[line[:-1]] = sum(len(i) for i in instrs)
            continue
        for part in line.split(";"):
            words = part.split()
            if words:
                instrs.append(words)
    out = []
    for words in instrs:
        out.append(OPS[words[0]])
        for arg in words[1:]:
            if arg in labels:
                out.append(labels[arg])
            elif arg in SLOTS:
                out.append(SLOTS[arg])
            else:
                out.append(int(arg))
    return out

if __name__ == "__main__":
    code = assemble(SRC)
    print(len(code))
    for i in range(0, len(code), 16):
        print("    " + ", ".join(str(x) for x in code[i:i + 16]) + ",")

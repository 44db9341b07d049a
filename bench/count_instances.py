#!/usr/bin/env python3
"""Rough count of the generic instances a multi-module Pare program creates.

Textual, not a type checker: finds every `path<args>` whose args are fully
concrete after substitution, starting from the non-generic functions, and
follows instances transitively. Usage: count_instances.py DIR [-v]"""
import os, re, sys

def split_top(s):
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "<([{": depth += 1
        if ch in ">)]}": depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip()); cur = ""
        else:
            cur += ch
    if cur.strip(): parts.append(cur.strip())
    return parts

def match_angle(s, i):
    """s[i] == '<'; index of the matching '>'."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] == "<": depth += 1
        elif s[j] == ">":
            depth -= 1
            if depth == 0: return j
        elif s[j] in ";{}": return -1
    return -1

def load(d):
    fns = {}
    for f in os.listdir(d):
        if not f.endswith(".pare"): continue
        mod = f[:-5]
        src = re.sub(r"//[^\n]*", "", open(os.path.join(d, f)).read())
        for m in re.finditer(r"\bfn\s+(\w+)\s*", src):
            name, gen = m.group(1), None
            if src[m.end()] == "<":
                e = m.end()
                depth = 0
                for k in range(e, len(src)):
                    if src[k] == "<": depth += 1
                    elif src[k] == ">" and src[k - 1] != "-":
                        depth -= 1
                        if depth == 0: break
                gen = src[e:k + 1]
            params = []
            if gen:
                for p in split_top(gen[1:-1]):
                    p = p.replace("const ", "")
                    params.append(p.split(":")[0].strip())
            # body: from the first '{' after the match to its matching '}'
            i = src.index("{", m.end())
            depth, j = 0, i
            while True:
                if src[j] == "{": depth += 1
                elif src[j] == "}":
                    depth -= 1
                    if depth == 0: break
                j += 1
            fns[mod + "::" + name] = (mod, params, src[i:j + 1])
    return fns

def generic_refs(text):
    """(path, [args]) for every path<...> reference in text."""
    out = []
    for m in re.finditer(r"([A-Za-z_][\w]*(?:::[A-Za-z_]\w*)?)<", text):
        i = m.end() - 1
        j = match_angle(text, i)
        if j < 0: continue
        inner = text[i + 1:j]
        # comparisons like `a < b` have no matching '>' before ';' usually;
        # require the reference to be a call or nested generic argument
        nxt = text[j + 1:j + 2]
        if nxt not in ("(", ",", ">", ")") and not text[j + 1:].startswith(">"):
            continue
        out.append((m.group(1), split_top(inner)))
    return out

def main():
    d = sys.argv[1]
    fns = load(d)
    seen = {}
    def resolve(mod, path):
        full = path if "::" in path else mod + "::" + path
        return full if full in fns else None
    def canon(mod, arg, subst):
        arg = arg.strip()
        if arg.startswith("(") or arg.startswith("{"):
            arg = arg[1:-1].strip()
        if arg in subst: return subst[arg]
        m = re.match(r"([\w:]+)<(.*)>$", arg)
        if m:
            fn = resolve(mod, m.group(1))
            if fn:
                return instantiate(fn, [canon(mod, a, subst) for a in split_top(m.group(2))])
        fn = resolve(mod, arg)
        if fn: return fn
        for k, v in subst.items():
            arg = re.sub(r"\b%s\b" % re.escape(k), v, arg)
        try:
            return str(eval(arg.replace("'", "")))
        except Exception:
            return arg
    def instantiate(fn, args):
        key = fn + "<" + ", ".join(args) + ">"
        if key in seen: return key
        seen[key] = True
        mod, params, body = fns[fn]
        walk(mod, body, dict(zip(params, args)))
        return key
    def walk(mod, body, subst):
        for path, args in generic_refs(body):
            fn = resolve(mod, path)
            if fn and fns[fn][1]:
                instantiate(fn, [canon(mod, a, subst) for a in args])
    for fn, (mod, params, body) in fns.items():
        if not params: walk(mod, body, {})
    if "-v" in sys.argv:
        for k in sorted(seen): print(k)
    mods = sorted({k.split("::")[0] for k in seen})
    print(len(seen), "instances in", len(mods), "modules:", " ".join(mods))

main()

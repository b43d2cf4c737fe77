"""The longest functions of Rust files, for ARCHITECTURE.md's counts (issue 32).

  python3 scripts/longest_fns.py FILE... [--top N]    # "lines name file" per function, longest first

A function's length is its lines from `fn` to its closing brace (comments and blank lines
included, as an editor shows them). Strings, chars and comments are skipped when matching braces.
"""

import re
import sys


def strip(src):
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i) + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == '"' or (c == "r" and re.match(r'r#*"', src[i:]) and not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'r(#*)"', src[i:])
            if c == "r" and m:
                end = '"' + m.group(1)
                j = src.find(end, i + len(m.group(0))) + len(end)
            else:
                j = i + 1
                while src[j] != '"':
                    j += 2 if src[j] == "\\" else 1
                j += 1
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == "'":
            m = re.match(r"'(\\.[^']{0,8}|[^\\'])'", src[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    text = strip(open(path).read())
    for m in re.finditer(r"\bfn\s+(\w+)", text):
        body = text.find("{", m.end())
        semi = text.find(";", m.end())
        if body < 0 or (0 <= semi < body):
            continue  # a declaration without a body
        depth, j = 0, body
        while j < len(text):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        start = text.count("\n", 0, m.start()) + 1
        end = text.count("\n", 0, j) + 1
        yield end - start + 1, m.group(1), path


if __name__ == "__main__":
    args = sys.argv[1:]
    top = 5
    if "--top" in args:
        k = args.index("--top")
        top = int(args[k + 1])
        del args[k : k + 2]
    fns = sorted((f for p in args for f in functions(p)), reverse=True)
    for n, name, path in fns[:top]:
        print(f"{n:5d} {name} {path}")

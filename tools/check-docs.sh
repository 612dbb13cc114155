#!/usr/bin/env bash
# Checks the documentation a user reads, in seconds, with bash and python3 only (CI stage after the
# format check): README's performance table is the block of docs/performance.md between the
# perf-table markers; every relative link and anchor in README.md and docs/ resolves inside the
# repository; README links every page of docs/; README's set-up commands and page lengths hold; the
# code blocks README marks "checked" use names the library has (the C block is compiled when a C
# compiler is at hand, the Python block parsed, the C++ block is tests/embed_snippet's text).
# `tools/check-docs.sh --run BUILD` also runs README's C and Python blocks against BUILD/libanycl.so
# (a few seconds on PoCL; ANYCL_DEVICE chooses the device) — for after the build, not CI's first stage.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - "$@" <<'PY'
import ast, os, re, shutil, subprocess, sys, tempfile, unicodedata

errors = []
run_build = None
if sys.argv[1:2] == ["--run"]:
    if len(sys.argv) != 3 or not os.path.exists(os.path.join(sys.argv[2], "libanycl.so")):
        sys.exit("usage: tools/check-docs.sh [--run BUILD_DIR]  (BUILD_DIR holds libanycl.so)")
    run_build = os.path.realpath(sys.argv[2])
elif sys.argv[1:]:
    sys.exit("usage: tools/check-docs.sh [--run BUILD_DIR]  (BUILD_DIR holds libanycl.so)")
def fail(msg):
    errors.append(msg)

def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()

def md_files():
    out = ["README.md"]
    for root, _, files in os.walk("docs"):
        out += [os.path.join(root, f) for f in sorted(files) if f.endswith(".md")]
    return out

FENCE = re.compile(r"^(```|~~~)")

def prose_lines(text):
    """(line number, line) outside fenced code blocks, with inline code removed."""
    inside = False
    for n, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line.lstrip()):
            inside = not inside
            continue
        if not inside:
            yield n, re.sub(r"`[^`]*`", "", line)

def slug(heading):
    """GitHub's anchor for a heading: markup dropped, lower case, letters/digits/-/_ kept, spaces to -."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>|[`*]", "", text).strip().lower()
    return "".join("-" if c == " " else c for c in text
                   if c in " -_" or unicodedata.category(c)[0] in "LMN")

anchor_cache = {}
def anchors(path):
    if path not in anchor_cache:
        found, seen = set(), {}
        inside = False
        for line in read(path).split("\n"):
            if FENCE.match(line.lstrip()):
                inside = not inside
                continue
            if inside:
                continue
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                s = slug(m.group(1))
                n = seen.get(s, 0)
                seen[s] = n + 1
                found.add(s if n == 0 else f"{s}-{n}")
            for m in re.finditer(r'<a\s+(?:id|name)="([^"]+)"', line):
                found.add(m.group(1))
        anchor_cache[path] = found
    return anchor_cache[path]

# 1. Links: every relative link resolves to a file (or folder) inside the repository, and every
#    anchor to a heading of its page.
repo = os.path.realpath(".")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)")
for page in md_files():
    text = read(page)
    for n, line in prose_lines(text):
        targets = [m.group(1) for m in LINK.finditer(line)] + [m.group(1) for m in REF.finditer(line)]
        for target in targets:
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
                continue
            where = f"{page}:{n}: link '{target}'"
            path, _, anchor = target.partition("#")
            resolved = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not os.path.realpath(resolved).startswith(repo + os.sep):
                fail(f"{where} points outside the repository (readers of a clone or an archive do not have it)")
                continue
            if not os.path.exists(resolved):
                fail(f"{where}: no file {resolved}")
                continue
            if anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
                fail(f"{where}: {resolved} has no heading with the anchor #{anchor}")
    if page == "README.md" and "../shared" in text:
        fail("README.md mentions ../shared, which is not part of the repository")

# 2. README's performance table is docs/performance.md's block, character for character.
def block(path, name):
    m = re.search(rf"<!-- {name}: begin.*?-->\n(.*?)<!-- {name}: end -->", read(path), re.S)
    return m.group(1) if m else None
readme_table, perf_table = block("README.md", "perf-table"), block("docs/performance.md", "perf-table")
if readme_table is None or perf_table is None:
    fail("the <!-- perf-table: begin … --> / <!-- perf-table: end --> block is missing from "
         + ("README.md" if readme_table is None else "docs/performance.md"))
elif readme_table != perf_table:
    a, b = readme_table.split("\n"), perf_table.split("\n")
    for i in range(max(len(a), len(b))):
        x, y = (a[i] if i < len(a) else "<none>"), (b[i] if i < len(b) else "<none>")
        if x != y:
            fail(f"README's performance table differs from docs/performance.md's at row {i + 1}:\n"
                 f"    README.md:           {x}\n    docs/performance.md: {y}\n"
                 "  docs/performance.md is the source: copy its block into README.md")
            break

# 3. README indexes every page of docs/; lengths; the set-up commands CI and newcomers rely on.
readme = read("README.md")
linked = {os.path.normpath(m.group(1).partition("#")[0]) for _, l in prose_lines(readme) for m in LINK.finditer(l)}
for page in md_files()[1:]:
    if page not in linked:
        fail(f"README.md's documentation index does not link {page} (one line per page)")
for page, most in (("README.md", 200), ("docs/performance.md", 200)):
    lines = read(page).count("\n")
    if lines > most:
        fail(f"{page} has {lines} lines; keep it at most {most} (move detail to a page under docs/)")
for command in ("bash tools/run-main.sh", "bash tools/run-tests.sh"):
    if not re.search(rf"^{re.escape(command)}\s", readme, re.M):
        fail(f"README.md no longer gives the set-up command '{command}' at the start of a line")
if "tools/run-tests.sh" not in read(".ci/run"):
    fail(".ci/run no longer runs tools/run-tests.sh, README's test command")

# 4. Code blocks README marks with <!-- checked: … --> use today's API.
CHECKED = re.compile(r"<!-- checked: (\S+).*?-->\n```(\w+)\n(.*?)\n```", re.S)
blocks = CHECKED.findall(readme)
if {lang for _, lang, _ in blocks} != {"cpp", "c", "python"}:
    fail("README.md should hold one checked C++, C and Python block each (<!-- checked: FILE --> before the fence)")
for source, lang, code in blocks:
    if lang == "cpp":
        snippet = read(source)
        first, _, body = code.partition("\n")
        if first not in snippet or body not in snippet:
            fail(f"README's C++ block is no longer the text of {source} (which CI compiles and runs): "
                 "change both together")
    elif lang == "c":
        header = read("include/anycl/anycl.h")
        for name in sorted(set(re.findall(r"\b(?:anycl|ANYCL)_\w+", code))):
            if not re.search(rf"\b{name}\b", header):
                fail(f"README's C block uses {name}, which include/anycl/anycl.h does not declare")
        cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
        if cc:
            with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as f:
                f.write(code + "\n")
            r = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-Iinclude", f.name],
                               capture_output=True, text=True)
            os.unlink(f.name)
            if r.returncode:
                fail(f"README's C block does not compile against include/anycl/anycl.h:\n{r.stderr.strip()}")
        else:
            print("check-docs: no C compiler here; README's C block checked by its names only", file=sys.stderr)
        if run_build and cc:
            main = r'''
int main(void) { /* three separable blobs in 2-D, 300 samples; the last 30 predicted */
  enum { n = 300, d = 2, k = 3, m = 30 };
  static float x[n * d], probs[m * k];
  static int32_t y[n];
  for (int i = 0; i < n; ++i) {
    y[i] = i % k;
    x[2 * i] = (float)(y[i] == 1) * 4.f + (float)((i * 37) % 11) / 11.f;
    x[2 * i + 1] = (float)(y[i] == 2) * 4.f + (float)((i * 53) % 13) / 13.f;
  }
  if (train_and_predict(x, y, n, d, k, x + (n - m) * d, m, probs)) return 1;
  int right = 0;
  for (int i = n - m; i < n; ++i) {
    const float* p = probs + (i - (n - m)) * k;
    int best = p[1] > p[0] ? 1 : 0;
    best = p[2] > p[best] ? 2 : best;
    right += best == y[i];
  }
  printf("README's C block: %d of %d right\n", right, m);
  return right >= m * 9 / 10 ? 0 : 3;
}
'''
            with tempfile.TemporaryDirectory() as tmp:
                src, exe = os.path.join(tmp, "readme.c"), os.path.join(tmp, "readme")
                with open(src, "w") as f:
                    f.write(code + "\n" + main)
                r = subprocess.run([cc, "-std=c11", "-Iinclude", src, "-o", exe, f"-L{run_build}", "-lanycl",
                                    f"-Wl,-rpath,{run_build}"], capture_output=True, text=True)
                if r.returncode == 0:
                    r = subprocess.run([exe], capture_output=True, text=True, cwd=tmp, timeout=600)
                print(r.stdout.strip(), file=sys.stderr)
                if r.returncode:
                    fail(f"README's C block did not build or run against {run_build}:\n{r.stderr.strip()}")
    elif lang == "python":
        try:
            tree = ast.parse(code)
        except SyntaxError as e:
            fail(f"README's Python block does not parse: {e}")
            continue
        package = {f: read(os.path.join(source, f)) for f in os.listdir(source) if f.endswith(".py")}
        init = package.get("__init__.py", "")
        defs = set(re.findall(r"^\s*def (\w+)\(([^)]*)", "\n".join(package.values()), re.M))
        functions = {name for name, _ in defs}
        parameters = {p.split("=")[0].strip().lstrip("*") for _, params in defs for p in params.split(",")}
        imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "anycl":
                if not re.search(rf"\b{node.attr}\b", init):
                    fail(f"README's Python block uses anycl.{node.attr}, which python/anycl/__init__.py does not export")
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("anycl."):
                module = node.module.split(".", 1)[1] + ".py"
                for alias in node.names:
                    if not re.search(rf"^class {alias.name}\b", package.get(module, ""), re.M):
                        fail(f"README's Python block imports {alias.name} from {node.module}, which has no such class")
            elif isinstance(node, ast.Call):
                func, ours = node.func, False
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                    if func.value.id == "anycl":
                        ours = True
                    elif func.value.id not in ("np", "numpy"):  # a method of an anycl object
                        ours = True
                        if func.attr not in functions:
                            fail(f"README's Python block calls .{func.attr}(), which no class in python/anycl defines")
                elif isinstance(func, ast.Name):
                    ours = func.id in imported
                for kw in node.keywords if ours else []:
                    if kw.arg and kw.arg not in parameters:
                        fail(f"README's Python block passes {kw.arg}=, which no function in python/anycl takes")
        if run_build:
            venv = os.path.join(run_build, "onnx-venv", "bin", "python3")  # numpy, from tools/setup.sh
            python = venv if os.path.exists(venv) else sys.executable
            env = dict(os.environ, PYTHONPATH=os.path.realpath(source.split("/")[0]),
                       ANYCL_LIBRARY=os.path.join(run_build, "libanycl.so"))
            with tempfile.TemporaryDirectory() as tmp:
                r = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=tmp, env=env,
                                   timeout=600)
            print("README's Python block printed:", r.stdout.strip(), file=sys.stderr)
            if r.returncode:
                fail(f"README's Python block failed against {run_build}:\n{r.stderr.strip()[-2000:]}")

if errors:
    print("check-docs: " + "\ncheck-docs: ".join(errors), file=sys.stderr)
    print(f"check-docs: {len(errors)} problem(s)", file=sys.stderr)
    sys.exit(1)
print(f"check-docs: {len(md_files())} pages, their links and anchors, README's performance table and code blocks: ok",
      file=sys.stderr)
PY

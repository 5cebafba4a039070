#!/usr/bin/env bash
# The documentation against the tool: README.md and docs/*.md quote ffnshape commands, flags and paths;
# this test holds them to the binary and the tree, so a renamed flag, a moved config or a dead link fails.
# Environment: FFNSHAPE (the binary), SOURCE_DIR (the repository).
#
# 1. Quoted commands. Every line of a code block (fenced, or indented by 4 or more spaces) that starts
#    with `ffnshape `, `build/ffnshape ` or `$ ` before either is a quoted command; a line ending in `\`
#    continues on the next. Each one is run with bash (so pipes work) in a temporary folder that links
#    every top-level entry of the repository except build*, runs, data and .venv, so that relative
#    paths resolve and whatever a command writes stays in the temporary folder; `ffnshape` on PATH and
#    build/ffnshape there are $FFNSHAPE. It must exit 0. After a `$ ` command, the block's following
#    lines up to the next `$ ` line are its quoted output: each of them must be a line of what the
#    command prints (spacing aside), unless the command is in OUTPUT_VARIES below.
#    Skipped, and counted as skipped:
#    - templates: a command with a placeholder word (CONFIG, RUN_DIR, FILE.gguf: capitals, optionally
#      with an extension) or `...` is a synopsis, not something to run;
#    - commands matched by SKIP below, each with its reason (a trained run, data, a GPU, or minutes).
#    Anything else runs, so a new cheap command in the documentation is tested without touching this file.
# 2. `ffnshape SUBCOMMAND --help` for every `### \`ffnshape ...\`` section of docs/commands.md, and the
#    flags each section names in backticks must appear in that help (or the top-level help); so must
#    the flags after `ffnshape SUBCOMMAND` in any code span or code line of any page.
# 3. Links: every relative link and image target in the pages exists, and a #fragment names a heading
#    of the target page (GitHub's anchors).
# 4. Paths: every repository path in backticks or code lines (configs/, scripts/, tests/, bench/,
#    include/, src/, tools/, examples/, docs/, cmake/, .ci/) exists; a glob must match something.
set -uo pipefail
: "${FFNSHAPE:?FFNSHAPE must name the ffnshape binary}"
: "${SOURCE_DIR:?SOURCE_DIR must name the repository}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$FFNSHAPE" "$SOURCE_DIR" "$tmp" <<'PY'
import glob, os, re, subprocess, sys

ffnshape, source, tmp = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]

# Commands that are not run: (regular expression on the command, reason). The first match decides.
SKIP = [
    (r"^ffnshape sweep\b.*--report", "aggregates finished runs"),
    (r"^ffnshape (train|eval|generate|profile|export)\b", "needs a trained run"),
    (r"^ffnshape import\b", "needs a Hugging Face folder or a GGUF file"),
    (r"^ffnshape data prepare\b", "needs a text corpus"),
    (r"^ffnshape geometry\b.*\b(circle|blob|moved)\.csv\b",
     "needs the clouds tests/cli_geometry_test.sh makes (it holds these commands to ripser, POT, GUDHI, numpy)"),
    (r"^ffnshape schedule\b.*--profile\b", "needs the work profile of a trained run"),
    (r"^ffnshape (experiment|sweep)\b(?!.*(--dry-run|--emit))", "trains"),
    (r"^ffnshape params bad\.yaml", "shows an error; bad.yaml stands for the reader's own file"),
]
# Commands whose quoted output depends on the machine (GPUs, CUDA build): exit code only.
OUTPUT_VARIES = [r"^ffnshape (version|--version)\b"]
PLACEHOLDER = re.compile(r"[A-Z][A-Z0-9_]*[A-Z](\.[a-z]+)?")
PATH_ROOTS = ("configs/", "scripts/", "tests/", "bench/", "include/", "src/", "tools/", "examples/",
              "docs/", "cmake/", ".ci/")
# Code spans that start with another program (its flags are not ffnshape's).
LAUNCHERS = re.compile(r"^(torchrun|srun|sbatch|bash|python3?|cmake|ctest|exec|\S+=|\S+\.(py|sh)\b|(scripts|bench|tests)/)")

failures, checks = [], 0
def check(ok, message):
    global checks
    checks += 1
    if not ok:
        failures.append(message)
        print("FAIL: " + message)

pages = [os.path.join(source, "README.md")] + sorted(glob.glob(os.path.join(source, "docs", "**", "*.md"), recursive=True))
def rel(path):
    return os.path.relpath(path, source)

def parse(path):
    """Yields (kind, line number, text) for the page: 'code' lines of code blocks, 'text' otherwise."""
    fenced, previous_blank, in_indented = False, True, False
    for number, line in enumerate(open(path, encoding="utf-8").read().split("\n"), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            yield "code", number, line
            continue
        indented = line.startswith("    ") and line.strip() != ""
        if indented and (previous_blank or in_indented):
            in_indented = True
            yield "code", number, line
        else:
            if line.strip() != "":
                in_indented = False
            yield ("blank" if line.strip() == "" else "text"), number, line
        previous_blank = line.strip() == ""

def strip_prompt(text):
    text = text.strip()
    prompt = text.startswith("$ ")
    if prompt:
        text = text[2:].lstrip()
    if text.startswith("build/ffnshape "):
        text = text[len("build/"):]
    return prompt, text

def code_spans(line):
    return re.findall(r"`([^`]+)`", line)

# ---------------------------------------------------------------- help texts
def run_help(args):
    p = subprocess.run([ffnshape] + args + ["--help"], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr
rc, top_help = run_help([])
check(rc == 0, "ffnshape --help: exit %d" % rc)
subcommands = re.findall(r"^  (\w+)\s", top_help.split("Subcommands:", 1)[-1], re.M)
helps = {}
def help_of(sub):
    """The help text of SUB ('train', 'data prepare', 'geometry ph'; 'geometry': all of its subcommands)."""
    if sub not in helps:
        rc, text = run_help(sub.split())
        check(rc == 0, "ffnshape %s --help: exit %d" % (sub, rc))
        nested = re.findall(r"^  (\w+)\s", text.split("Subcommands:", 1)[1], re.M) if "Subcommands:" in text else []
        for n in nested:
            text += help_of(sub + " " + n)
        helps[sub] = text
    return helps[sub]
def flags_in(text):
    return re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text)
def check_flags(sub, flags, where):
    known = help_of(sub) + top_help
    for flag in flags:
        check(re.search(re.escape(flag) + r"(?![\w-])", known) is not None,
              "%s: %s is not an option of `ffnshape %s` (see its --help)" % (where, flag, sub))
def subcommand_at(text):
    """For text starting with a subcommand name: ('data prepare' | 'geometry ph' | 'train', rest)."""
    words = text.split()
    if not words or words[0] not in subcommands:
        return None, text
    sub = words[0]
    if len(words) > 1 and re.fullmatch(r"[a-z]+", words[1]):
        nested = help_of(sub)
        if re.search(r"^  %s\s" % re.escape(words[1]), nested, re.M):
            sub += " " + words[1]
    return sub, text

# ---------------------------------------------------------------- 1. quoted commands
work = os.path.join(tmp, "work")
os.makedirs(os.path.join(work, "build"))
os.makedirs(os.path.join(tmp, "bin"))
for entry in os.listdir(source):
    if entry in (".git", "runs", "data", ".venv") or entry.startswith("build"):
        continue
    os.symlink(os.path.join(source, entry), os.path.join(work, entry))
os.symlink(ffnshape, os.path.join(work, "build", "ffnshape"))
os.symlink(ffnshape, os.path.join(tmp, "bin", "ffnshape"))
env = dict(os.environ, PATH=os.path.join(tmp, "bin") + os.pathsep + os.environ.get("PATH", ""))

commands = []   # (where, command, prompt, expected output lines)
for page in pages:
    lines = list(parse(page))
    i = 0
    while i < len(lines):
        kind, number, line = lines[i]
        prompt, text = strip_prompt(line) if kind == "code" else (False, "")
        if kind == "code" and (text.startswith("ffnshape ") or text == "ffnshape"):
            while text.endswith("\\") and i + 1 < len(lines) and lines[i + 1][0] == "code":
                i += 1
                text = text[:-1].rstrip() + " " + lines[i][2].strip()
            expected = []
            if prompt:
                while i + 1 < len(lines) and lines[i + 1][0] == "code" and not lines[i + 1][2].strip().startswith("$ "):
                    i += 1
                    expected.append(lines[i][2].strip())
            commands.append(("%s:%d" % (rel(page), number), text, prompt, expected))
        i += 1

ran, skipped = 0, []
for where, command, prompt, expected in commands:
    bare = re.sub(r"\s+#.*$", "", command)  # a trailing comment
    words = [w.strip("[](),;") for w in bare.split()]
    if "..." in bare or any(PLACEHOLDER.fullmatch(w) for w in words):
        skipped.append((where, command, "template"))
        continue
    reason = next((r for pattern, r in SKIP if re.search(pattern, bare)), None)
    if reason:
        skipped.append((where, command, reason))
        continue
    sub, _ = subcommand_at(bare[len("ffnshape"):].strip())
    if sub:
        check_flags(sub, flags_in(bare.split("|")[0]), where)
    ran += 1
    print("run %s: %s" % (where, command if len(command) < 100 else command[:97] + "..."))
    try:
        p = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=work, env=env,
                           capture_output=True, text=True, timeout=300)
        code, output = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        code, output = "timeout", ""
    check(code == 0, "%s: `%s` exited %s\n  %s" % (where, command, code, output.strip()[-600:].replace("\n", "\n  ")))
    if code != 0 or any(re.search(p, bare) for p in OUTPUT_VARIES):
        continue
    printed = {" ".join(l.split()) for l in output.split("\n")}
    for line in expected:
        if line.strip():
            check(" ".join(line.split()) in printed,
                  "%s: `%s` no longer prints the quoted line\n  %s\n  it printed:\n  %s"
                  % (where, command, line, output.strip()[:1500].replace("\n", "\n  ")))

# ---------------------------------------------------------------- 2. --help and the flags of each section
commands_page = os.path.join(source, "docs", "commands.md")
section, section_flags, helped = None, {}, 0
for kind, number, line in parse(commands_page):
    if kind == "text" and line.startswith("#"):
        section = None
        m = re.match(r"^### `ffnshape ([^`]*)`", line)
        if m:
            words = m.group(1).split()
            section = words[0] + (" " + words[1] if words[0] == "data" else "")
            check(words[0] in subcommands, "docs/commands.md:%d: no subcommand `%s`" % (number, words[0]))
            section_flags.setdefault(section, set()).update(flags_in(m.group(1)))
        continue
    if section and kind == "text":
        for span in code_spans(line):
            first = span.split()[0] if span.split() else ""
            if first in subcommands:  # `train --run-dir` inside another section: train's flags
                check_flags(first, flags_in(span), "docs/commands.md:%d" % number)
            elif not LAUNCHERS.match(span) and not span.startswith("ffnshape "):
                section_flags[section].update(flags_in(span))
for section, flags in sorted(section_flags.items()):
    if section.split()[0] in subcommands:
        help_of(section)
        helped += 1
        check_flags(section, sorted(flags), "docs/commands.md, section ffnshape " + section)

# Flags after `ffnshape SUBCOMMAND` anywhere: code spans and code lines of every page.
for page in pages:
    for kind, number, line in parse(page):
        pieces = code_spans(line) if kind == "text" else [line]
        for piece in pieces:
            for m in re.finditer(r"(?:^|[\s(])(?:\$ )?(?:build/)?ffnshape ([a-z].*)", piece.strip()):
                rest = m.group(1)
                sub, _ = subcommand_at(rest)
                if sub is None:
                    if re.fullmatch(r"[a-z]+", rest.split()[0]) and kind == "code":
                        check(False, "%s:%d: `ffnshape %s`: no such subcommand" % (rel(page), number, rest.split()[0]))
                    continue
                check_flags(sub, flags_in(rest.split("|")[0]), "%s:%d" % (rel(page), number))

# ---------------------------------------------------------------- 3. links and 4. paths
def anchors(path):
    seen, result = {}, set()
    for kind, number, line in parse(path):
        if kind == "text" and re.match(r"^#{1,6} ", line):
            slug = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            result.add(slug if n == 0 else "%s-%d" % (slug, n))
    return result

links = paths = 0
for page in pages:
    for kind, number, line in parse(page):
        where = "%s:%d" % (rel(page), number)
        if kind == "text":
            for target in re.findall(r"\]\(([^)\s]+)\)", re.sub(r"`[^`]*`", "", line)):
                if re.match(r"^[a-z]+:", target):
                    continue
                links += 1
                file_part, _, fragment = target.partition("#")
                resolved = os.path.normpath(os.path.join(os.path.dirname(page), file_part)) if file_part else page
                check(os.path.exists(resolved), "%s: link to %s: no such file" % (where, target))
                if fragment and os.path.exists(resolved) and resolved.endswith(".md"):
                    check(fragment in anchors(resolved), "%s: link to %s: no heading with that anchor" % (where, target))
        pieces = code_spans(line) if kind == "text" else [line]
        for piece in pieces:
            for word in piece.split():
                word = word.strip("\"'(),;:")
                if not word.startswith(PATH_ROOTS) or re.search(r"[{}<>$]|\.\.\.|[A-Z]{3,}", word):
                    continue
                paths += 1
                check(len(glob.glob(os.path.join(source, word))) > 0, "%s: %s does not exist" % (where, word))

for where, command, reason in skipped:
    print("skipped %s: %s (%s)" % (where, command if len(command) < 90 else command[:87] + "...", reason))
print("docs_commands: ran %d quoted commands and %d --help pages, skipped %d quoted commands; "
      "checked %d links and %d paths; %d checks, %d failed"
      % (ran, helped, len(skipped), links, paths, checks, len(failures)))
sys.exit(1 if failures else 0)
PY

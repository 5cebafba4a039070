# Sourced by scripts/sanitize.sh and scripts/fuzz.sh: how the sanitizers report, and the suppression
# files for what they find inside LibTorch and the other uninstrumented libraries (each entry says
# why it is there). A finding in ffnshape's own code is never suppressed: it is fixed.
sanitizer_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
suppressions=$sanitizer_root/tests/sanitizers
# halt_on_error: the first report fails the test. detect_leaks: LeakSanitizer at exit.
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1:${ASAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$suppressions/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$suppressions/ubsan.supp:${UBSAN_OPTIONS:-}"

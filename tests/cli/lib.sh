# Shared by the CLI shell tests: a scratch folder, and checks that record failures.
# Sourced after setting portent="$1".
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # check NAME EXPECTED_EXIT COMMAND...
  name=$1; want=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL $name: exit $got, expected $want"; cat "$tmp/err"; fail=1
  fi
}
has() { # has NAME FILE TEXT
  grep -q -- "$3" "$2" || { echo "FAIL $1: '$3' not in $2:"; cat "$2"; fail=1; }
}

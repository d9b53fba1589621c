#!/bin/sh
# layers.sh SRC - the modules' dependencies point one way (issue 32):
#
#   hwdb <- space <- estimator <- search <- launch, plot <- emit <- sweep
#        <- lib (include/trainplan.h its public header) <- cli, python
#
# Checked from the #include "..." lines of every source and header of a
# module: none may name a header of a module above its own, nor of a
# sibling (launch and plot share a rank but not their headers); cli/ (the
# executable) and python/ (the package's C module) include the public
# header only, as any client of the library; a module's private header
# (NAME_int.h) is its own. tests/, bench/ and fuzz/ sit above everything
# and are not checked. Prints each offending line as FILE:LINE: and exits
# 1 if there is one.
set -u
cd "${1:?usage: layers.sh SRC}" || exit 2

# rank of a module folder; include/ is lib's public header
rank() {
    case $1 in
    hwdb) echo 0 ;; space) echo 1 ;; estimator) echo 2 ;; search) echo 3 ;;
    launch | plot) echo 4 ;; emit) echo 5 ;; sweep) echo 6 ;;
    lib | include) echo 7 ;; cli | python) echo 8 ;; *) echo -1 ;;
    esac
}
MODULES="hwdb space estimator search launch plot emit sweep lib include cli python"

# every header's module: "NAME.h DIR" lines; est_build.h is generated
# into the build folder (estimator/CMakeLists.txt)
HEADERS=$(echo "est_build.h estimator"
for d in $MODULES; do
    for h in "$d"/*.h; do [ -e "$h" ] && echo "${h##*/} $d"; done
done)

OUT=$(mktemp) || exit 2
bad=0
for d in $MODULES; do
    rd=$(rank "$d")
    for f in "$d"/*.c "$d"/*.h; do
        [ -e "$f" ] || continue
        grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
        while IFS= read -r line; do
            name=$(printf '%s\n' "$line" | sed 's/.*include[[:space:]]*"\([^"]*\)".*/\1/')
            base=${name##*/}
            hd=$(printf '%s\n' "$HEADERS" | awk -v h="$base" '$1 == h {print $2; exit}')
            if [ -z "$hd" ]; then
                echo "$f:${line%%:*}: \"$name\" is no module's header"
                echo x
                continue
            fi
            [ "$hd" = "$d" ] && continue
            rh=$(rank "$hd")
            why=""
            if { [ "$d" = cli ] || [ "$d" = python ]; } && [ "$hd" != include ]; then
                why="$d/ includes the public header only (include/trainplan.h)"
            elif [ "$rh" -gt "$rd" ]; then
                why="$hd/ is above $d/"
            elif [ "$rh" -eq "$rd" ] && ! { [ "$d" = lib ] && [ "$hd" = include ]; }; then
                why="$hd/ and $d/ are siblings"
            elif [ "${base%_int.h}" != "$base" ]; then
                why="$base is private to $hd/"
            fi
            if [ -n "$why" ]; then
                echo "$f:${line%%:*}: includes \"$name\": $why"
                echo x
            fi
        done
    done
done >"$OUT" 2>&1
grep -v '^x$' "$OUT"
grep -q '^x$' "$OUT" && bad=1
rm -f "$OUT"
if [ "$bad" -ne 0 ]; then
    echo "FAIL: an include points up or across the module chain (tests/layers.sh)"
    exit 1
fi
echo "ok: no include points up the module chain"

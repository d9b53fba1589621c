#!/usr/bin/env bash
# install_e2e.sh - `cmake --install` into a scratch prefix, then a C client
# built with `pkg-config trainplan` runs without LD_LIBRARY_PATH (the .pc
# carries an rpath to the installed library), and the installed program
# finds its hardware database.
#
# usage: install_e2e.sh BUILD_DIR SCRATCH
set -u
BUILD=$1
SCRATCH=$2
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"
command -v pkg-config >/dev/null || { echo "pkg-config missing: skipped"; exit 77; }
command -v cc >/dev/null || { echo "cc missing: skipped"; exit 77; }
fail=0
cmake --install "$BUILD" --prefix "$SCRATCH/prefix" > "$SCRATCH/install.log" 2>&1 \
    || { echo "FAIL: cmake --install"; cat "$SCRATCH/install.log"; exit 1; }
cat > "$SCRATCH/client.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <trainplan.h>

int main(void)
{
    char *json = NULL, *err = NULL;
    int rc = tp_search_json("{\"model\": \"gpt3-1.7b\", \"system\": \"eos\", "
                                "\"max_gpus\": 8, \"seq_length\": 2048, "
                                "\"global_batch_size\": 64}", &json, &err);
    printf("%d %s\n", rc, json && strstr(json, "\"schema_version\"") ? "json" : "none");
    tp_free(json);
    tp_free(err);
    return rc;
}
C
export PKG_CONFIG_PATH="$(dirname "$(find "$SCRATCH/prefix" -name trainplan.pc | head -n 1)")"
# shellcheck disable=SC2046
if ! cc -o "$SCRATCH/client" "$SCRATCH/client.c" $(pkg-config --cflags --libs trainplan) \
        > "$SCRATCH/cc.log" 2>&1; then
    echo "FAIL: the client does not build with pkg-config"; cat "$SCRATCH/cc.log"; exit 1
fi
out=$(env -u LD_LIBRARY_PATH "$SCRATCH/client" 2>&1)
case "$out" in
    "0 json") echo "ok: the client runs without LD_LIBRARY_PATH" ;;
    *) echo "FAIL: client: $out"; fail=1 ;;
esac
out=$(env -u TRAINPLAN_HWDB "$SCRATCH/prefix/bin/trainplan" hw list 2>&1)
case "$out" in
    *h100-sxm*) echo "ok: the installed program finds its hardware database" ;;
    *) echo "FAIL: installed trainplan hw list: $out"; fail=1 ;;
esac
exit $fail

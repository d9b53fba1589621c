/*
 * fuzz_hf_config.c - fuzz target of the HuggingFace config.json loader
 * (space_model_from_hf_file): the input is the file. A model that loads
 * is then counted (space_model_params), whose int64 sums the loader's
 * limits promise to keep exact: UBSan sees an overflow there. Every input
 * that parses as JSON also goes through space_hf_unread (what --strict
 * and the warnings read), into a buffer too small on purpose.
 */
#include "fuzz.h"
#include "space.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_scratch(data, size);
    cJSON *j = NULL;
    tp_err je = {0};
    if (tp_json_load(path, &j, &je) == TP_OK) {
        char small[48], big[4096];
        int a = space_hf_unread(j, "f.json", small, sizeof small);
        int b = space_hf_unread(j, "f.json", big, sizeof big);
        fuzz_check(a == b && strlen(small) < sizeof small);
        fuzz_check((b == 0) == (big[0] == '\0'));
        cJSON_Delete(j);
    }
    space_model m;
    tp_err e = {0};
    if (space_model_from_hf_file(path, &m, &e) != TP_OK) {
        fuzz_check(e.status != TP_OK && e.msg[0]);
        return 0;
    }
    /* Unpadded (published counts) and Megatron's 128 x TP 8 padding. */
    static const int64_t pads[] = {1, 128 * 8};
    for (int i = 0; i < 2; i++) {
        space_params p;
        space_model_params(&m, pads[i], &p);
        fuzz_check(p.total > 0 && p.active > 0 && p.active <= p.total);
    }
    return 0;
}

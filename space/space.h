/*
 * space.h - the public header of space/: what a model is (a dense or MoE
 * decoder-only transformer, from a preset or a HuggingFace config.json,
 * with its exact parameter count and FLOPs per token), what a layout is,
 * and which layouts are valid. Include this one; it includes the topical
 * headers, each of one concern:
 *   space_model.h   models, parameter counts, FLOPs per token (and the
 *                   FLOP convention), presets, config.json readers
 *   space_layout.h  layouts, the names of their options, frameworks and
 *                   stacks, the validity rules
 *   space_savers.h  memory savers (savers.c)
 *   space_split.h   the pipeline split (split.c)
 *   space_grid.h    enumeration (grid.c) and layout tags
 */
#ifndef TP_SPACE_H
#define TP_SPACE_H

#include "space_model.h"
#include "space_layout.h"
#include "space_savers.h"
#include "space_split.h"
#include "space_grid.h"

#endif

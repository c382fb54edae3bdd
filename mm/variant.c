/*
 * variant.c: the switches that choose per-PTE or batched paths, and their
 * presets.  "upstream" is what mainline Linux batches today (fork, zap,
 * mprotect); "seeds" adds the proposals of the seed documents (GUP-fast
 * batching, write-fault reuse of up to 16 PTEs - on arm64 one contiguous
 * block, CONT_PTES).
 */
#include <stdlib.h>

#include "mm/internal.h"

struct preset {
	const char *name;
	struct pb_variant v;
};

static const struct preset presets[] = {
	{ "baseline", { .wp_reuse_max = 1 } },
	{ "upstream", { .wp_reuse_max = 1, .mprotect_batch = true,
			.fork_batch = true, .zap_batch = true } },
	{ "seeds", { .gup_batch = true, .wp_reuse_max = WP_REUSE_MAX_NR_PTES,
		     .mprotect_batch = true, .fork_batch = true,
		     .zap_batch = true } },
};
#define NR_PRESETS (sizeof(presets) / sizeof(presets[0]))

static const char *const preset_names[] = { "baseline", "upstream", "seeds", NULL };

/* PTRS_PER_PTE as text: the window lies inside one page table. */
#if PAGE_SHIFT == 12
#define PTRS_PER_PTE_TEXT "512"
#elif PAGE_SHIFT == 14
#define PTRS_PER_PTE_TEXT "2048"
#elif PAGE_SHIFT == 16
#define PTRS_PER_PTE_TEXT "8192"
#endif

static const char *const switch_names[] = {
	"gup_batch", "gup_batch_recheck", "wp_reuse_max", "mprotect_batch", "fork_batch",
	"zap_batch", NULL
};

static const char *const switch_help[] = {
	"0|1: GUP-fast takes a run of PTEs of one large folio at once",
	("0|1: with gup_batch, re-check the PMD and the run's PTEs after the"
	 " bulk grab, as the per-PTE walk does for every page (not in the seed)"),
	"1.." PTRS_PER_PTE_TEXT ", a power of two: PTEs one write-fault reuse may make writable",
	"0|1: mprotect changes PTEs of one large folio as a batch",
	"0|1: fork copies PTEs of one large folio as a batch",
	"0|1: munmap/exit/MADV_DONTNEED zap PTEs of one large folio as a batch",
};

const char *const *pb_variant_presets(void) { return preset_names; }
const char *const *pb_variant_switches(void) { return switch_names; }

const char *pb_variant_switch_help(const char *key)
{
	unsigned int i;

	for (i = 0; switch_names[i]; i++)
		if (!strcmp(key, switch_names[i]))
			return switch_help[i];
	return NULL;
}

int pb_variant_preset(const char *name, struct pb_variant *v)
{
	unsigned int i;

	for (i = 0; i < NR_PRESETS; i++) {
		if (!strcmp(name, presets[i].name)) {
			*v = presets[i].v;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_bool(const char *value, bool *out)
{
	if (!strcmp(value, "0") || !strcmp(value, "off")) {
		*out = false;
		return 0;
	}
	if (!strcmp(value, "1") || !strcmp(value, "on")) {
		*out = true;
		return 0;
	}
	return -EINVAL;
}

int pb_variant_set(struct pb_variant *v, const char *key, const char *value)
{
	if (!strcmp(key, "gup_batch"))
		return parse_bool(value, &v->gup_batch);
	if (!strcmp(key, "gup_batch_recheck"))
		return parse_bool(value, &v->gup_batch_recheck);
	if (!strcmp(key, "mprotect_batch"))
		return parse_bool(value, &v->mprotect_batch);
	if (!strcmp(key, "fork_batch"))
		return parse_bool(value, &v->fork_batch);
	if (!strcmp(key, "zap_batch"))
		return parse_bool(value, &v->zap_batch);
	if (!strcmp(key, "wp_reuse_max")) {
		char *end;
		unsigned long n = strtoul(value, &end, 10);

		/* The window is N-aligned inside one page table. */
		if (end == value || *end || !n || n > PTRS_PER_PTE || (n & (n - 1)))
			return -EINVAL;
		v->wp_reuse_max = (unsigned int)n;
		return 0;
	}
	return -ENOENT;
}

void pb_set_variant(const struct pb_variant *v) { machine.variant = *v; }
void pb_get_variant(struct pb_variant *v) { *v = machine.variant; }

// SPDX-License-Identifier: GPL-2.0-only
/*
 * slab.c: the model's own allocator for the objects that live as long as
 * a process, an mm, a VMA, an anon_vma or a GUP result does (pb_proc,
 * mm_struct and its VMA array, vm_area_struct, anon_vma, pb_pages and its
 * page array, the registry's lists): kzalloc/krealloc/kfree, as mm/ calls
 * them in the kernel.
 *
 * Plain calloc/realloc/free, so that the sanitizers see every object,
 * unless the machine was brought up with pb_config.checkpoints: then they
 * come from one arena, reserved once per host process and never unmapped,
 * whose allocator keeps its free lists inside it.  A checkpoint
 * (checkpoint.c) is then a copy of the arena's used bytes, and every
 * pointer between the objects stays valid when it is copied back.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "mm/internal.h"

/* Reserved, not committed: the host pays for what is used. */
#define ARENA_BYTES	(1UL << 32)
#define ARENA_HDR	16UL		/* a block's size class, keeps alignment */
#define ARENA_MIN_SHIFT	5
#define ARENA_CLASSES	33

/* At the arena's start, so that a copy of the used bytes includes it. */
struct arena_hdr {
	size_t used;
	void *free[ARENA_CLASSES];	/* a free block's first word: the next */
};

static char *arena_base;		/* reserved once, never unmapped */
static struct arena_hdr *arena;		/* NULL: plain calloc/free */

static bool in_arena(const void *p)
{
	return arena_base && (const char *)p >= arena_base &&
	       (const char *)p < arena_base + ARENA_BYTES;
}

void arena_enable(void)
{
	if (!arena_base) {
		void *p = mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			       -1, 0);

		if (p == MAP_FAILED)
			return;		/* checkpoints will say -ENOMEM */
		arena_base = p;
	}
	arena = (struct arena_hdr *)arena_base;
	memset(arena, 0, sizeof(*arena));
	arena->used = (sizeof(*arena) + ARENA_HDR - 1) & ~(ARENA_HDR - 1);
}

void arena_disable(void)
{
	arena = NULL;
}

const void *arena_contents(size_t *used)
{
	if (!arena)
		return NULL;
	*used = arena->used;
	return arena;
}

void arena_restore(const void *contents, size_t used)
{
	memcpy(arena, contents, used);
}

static unsigned int size_class(size_t size)
{
	unsigned int c = ARENA_MIN_SHIFT;

	while ((1UL << c) < size + ARENA_HDR)
		c++;
	return c;
}

void *kzalloc(size_t size)
{
	unsigned int c;
	char *block;

	if (!arena)
		return calloc(1, size ? size : 1);
	if (size > ARENA_BYTES / 4)
		return NULL;
	c = size_class(size);
	block = arena->free[c];
	if (block) {
		arena->free[c] = *(void **)block;
	} else {
		if (arena->used + (1UL << c) > ARENA_BYTES)
			return NULL;
		block = arena_base + arena->used;
		arena->used += 1UL << c;
	}
	*(size_t *)block = c;
	memset(block + ARENA_HDR, 0, (1UL << c) - ARENA_HDR);
	return block + ARENA_HDR;
}

void kfree(void *p)
{
	char *block;

	if (!p)
		return;
	block = (char *)p - ARENA_HDR;
	if (!in_arena(p)) {
		free(p);
		return;
	}
	/* A machine brought down frees nothing into the next one's arena. */
	if (!arena)
		return;
	*(void **)block = arena->free[*(size_t *)block];
	arena->free[*(size_t *)block] = block;
}

void *krealloc(void *p, size_t size)
{
	size_t have;
	void *n;

	if (!p || !in_arena(p))
		return arena && !p ? kzalloc(size) : realloc(p, size);
	have = (1UL << *(size_t *)((char *)p - ARENA_HDR)) - ARENA_HDR;
	if (size <= have)
		return p;
	n = kzalloc(size);
	if (!n)
		return NULL;
	memcpy(n, p, have);
	kfree(p);
	return n;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * known.c - a program whose memory behaviour is known exactly, for the
 * recorder's test (tests/record.sh): one private anonymous mapping of
 * NR pages (64, or the first argument; a second argument "scatter"
 * writes them in a scattered order, so that no two faults are neighbours:
 * a trace with one access per fault, for measuring), every page written, a fork whose child writes CHILD pages and
 * exits, the parent rewriting PARENT pages after the child is gone, and
 * an munmap.  Nothing else of it touches anonymous memory it mmaps
 * itself (it does not call malloc after the start).
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILD	16
#define PARENT	32

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE), NR = argc > 1 ? atol(argv[1]) : 64;
	volatile char *p;
	pid_t pid;
	int i, status;

	if (NR < PARENT)
		return 2;
	p = mmap(NULL, NR * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	for (i = 0; i < NR; i++) {
		/* 7919 is prime: i -> 7919 i mod NR visits every page once. */
		long at = argc > 2 && NR % 7919 ? (i * 7919L) % NR : i;

		p[at * page] = 1;
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		for (i = 0; i < CHILD; i++)
			p[i * page] = 2;
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	for (i = 0; i < PARENT; i++)
		p[i * page] = 3;
	if (munmap((void *)p, NR * page))
		return 1;
	return 0;
}

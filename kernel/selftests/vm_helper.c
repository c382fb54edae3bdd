// SPDX-License-Identifier: GPL-2.0-only
/*
 * vm-helper - what `ptebatch vm selftests` needs done inside a guest that
 * the guest has no program for: an arm64 guest's root is an initramfs
 * holding ptebatch alone, and the host's fallocate, mkswap, swapon and
 * dmesg (which it sees at /host) are x86_64 binaries.  Built for the
 * kernel's architecture by scripts/kernel-selftests, static on arm64.
 *
 *   vm-helper swapon FILE MB   make FILE a swap file of MB megabytes
 *                              (fallocate, a version 1 swap header for
 *                              this page size) and swap on it
 *   vm-helper kmsg             print the kernel's log since the last
 *                              kmsg, and clear it: each test's messages
 *                              are its own
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <unistd.h>

/* syslog(2)'s actions */
#define SYSLOG_ACTION_READ_CLEAR	4
#define SYSLOG_ACTION_SIZE_BUFFER	10

/*
 * The first page of a swap area (mkswap(8)'s "SWAPSPACE2" format, as
 * include/linux/swap.h's union swap_header lays it out): 1024 bytes left
 * for a boot block, then the header, and the magic in the page's last
 * 10 bytes.
 */
struct swap_info_header {
	uint32_t version;
	uint32_t last_page;
	uint32_t nr_badpages;
	unsigned char uuid[16];
	unsigned char volume_name[16];
};

static int do_swapon(const char *path, long mb)
{
	long ps = sysconf(_SC_PAGESIZE);
	off_t size = (off_t)mb << 20;
	struct swap_info_header h = { .version = 1 };
	char *page = calloc(1, (size_t)ps);
	int fd, err;

	if (!page || mb <= 0 || size / ps < 10) {
		fprintf(stderr, "vm-helper: swapon: bad size %ld MB\n", mb);
		return 2;
	}
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || fchmod(fd, 0600)) {
		fprintf(stderr, "vm-helper: %s: %s\n", path, strerror(errno));
		return 1;
	}
	/* Every block allocated: swap cannot use a file with holes. */
	err = posix_fallocate(fd, 0, size);
	if (err) {
		fprintf(stderr, "vm-helper: fallocate %s: %s\n", path,
			strerror(err));
		return 1;
	}
	h.last_page = (uint32_t)(size / ps - 1);
	memcpy(page + 1024, &h, sizeof(h));
	memcpy(page + ps - 10, "SWAPSPACE2", 10);
	if (pwrite(fd, page, (size_t)ps, 0) != ps || fsync(fd)) {
		fprintf(stderr, "vm-helper: writing %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	close(fd);
	free(page);
	if (swapon(path, 0)) {
		fprintf(stderr, "vm-helper: swapon %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	printf("swap on %s: %ld MB, %ld-byte pages\n", path, mb, ps);
	return 0;
}

static int do_kmsg(void)
{
	int size = klogctl(SYSLOG_ACTION_SIZE_BUFFER, NULL, 0);
	char *buf;
	int n;

	if (size <= 0)
		size = 1 << 20;
	buf = malloc((size_t)size);
	if (!buf)
		return 1;
	n = klogctl(SYSLOG_ACTION_READ_CLEAR, buf, size);
	if (n < 0) {
		fprintf(stderr, "vm-helper: kmsg: %s\n", strerror(errno));
		return 1;
	}
	fwrite(buf, 1, (size_t)n, stdout);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "swapon"))
		return do_swapon(argv[2], strtol(argv[3], NULL, 10));
	if (argc == 2 && !strcmp(argv[1], "kmsg"))
		return do_kmsg();
	fprintf(stderr, "usage: vm-helper swapon FILE MB | vm-helper kmsg\n");
	return 2;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * For fuzz targets whose code under test opens a path: the input is
 * written to one memfd per process, reachable as /proc/self/fd/N.
 */
#ifndef FUZZ_FILE_H
#define FUZZ_FILE_H

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* The input as a file path, or NULL if it could not be written. */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];

	if (fd < 0) {
		fd = memfd_create("fuzz-input", MFD_CLOEXEC);
		if (fd < 0)
			return NULL;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return NULL;
	return path;
}

#endif /* FUZZ_FILE_H */

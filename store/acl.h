/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An entry's POSIX ACL (acl.c, libacl).
 */
#ifndef BTSDUMPD_ACL_H
#define BTSDUMPD_ACL_H

#include <stdbool.h>
#include <sys/types.h>

/* Sets a POSIX access ACL on fd: owner rw(x), group none, user:uid r(x),
 * mask r(x), other none; x only when dir.  0, -EOPNOTSUPP where the
 * filesystem has no ACLs, or -errno. */
int btsdumpd_acl_grant_user(int fd, uid_t uid, bool dir);

#endif /* BTSDUMPD_ACL_H */

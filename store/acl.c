// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The POSIX access ACL (libacl) that lets the crashing user, and no one
 * else, read an entry of the store.
 */
#include <errno.h>
#include <stddef.h>
#include <sys/acl.h>

#include "acl.h"

/* Adds one entry to *acl: tag, its user (ACL_USER only) and permissions,
 * a mask of ACL_READ, ACL_WRITE and ACL_EXECUTE.  0 or -errno. */
static int acl_add(acl_t *acl, acl_tag_t tag, const uid_t *uid, unsigned int perms)
{
	static const acl_perm_t bits[] = { ACL_READ, ACL_WRITE, ACL_EXECUTE };
	acl_permset_t ps;
	acl_entry_t e;
	size_t i;

	if (acl_create_entry(acl, &e) || acl_set_tag_type(e, tag) ||
	    (uid && acl_set_qualifier(e, uid)) || acl_get_permset(e, &ps) ||
	    acl_clear_perms(ps))
		return -errno;
	for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if ((perms & bits[i]) && acl_add_perm(ps, bits[i]))
			return -errno;
	return acl_set_permset(e, ps) ? -errno : 0;
}

int btsdumpd_acl_grant_user(int fd, uid_t uid, bool dir)
{
	unsigned int x = dir ? ACL_EXECUTE : 0;
	acl_t acl = acl_init(5);
	int r;

	if (!acl)
		return -errno;
	r = acl_add(&acl, ACL_USER_OBJ, NULL, ACL_READ | ACL_WRITE | x);
	if (!r)
		r = acl_add(&acl, ACL_USER, &uid, ACL_READ | x);
	if (!r)
		r = acl_add(&acl, ACL_GROUP_OBJ, NULL, 0);
	if (!r)
		r = acl_add(&acl, ACL_MASK, NULL, ACL_READ | x);
	if (!r)
		r = acl_add(&acl, ACL_OTHER, NULL, 0);
	if (!r && acl_valid(acl))
		r = -errno;
	if (!r && acl_set_fd(fd, acl))
		r = errno == ENOTSUP || errno == EOPNOTSUPP ? -EOPNOTSUPP : -errno;
	acl_free(acl);
	return r;
}

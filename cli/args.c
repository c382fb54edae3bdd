/*
 * args.c - what every command's argument parsing shares: the usage-error
 * message, the "unknown WORD (known: ...)" refusal, and applying one
 * --set KEY=VALUE to a variant.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

const char *command;

int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("ptebatch: ", stderr);
	if (command)
		fprintf(stderr, "%s: ", command);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'ptebatch help'.\n", stderr);
	return EXIT_USAGE;
}

bool in_list(const char *const *list, const char *word)
{
	for (; *list; list++)
		if (!strcmp(*list, word))
			return true;
	return false;
}

int unknown_in_list(const char *flag, const char *what, const char *word,
		    const char *const *list)
{
	char known[256] = "";
	size_t len = 0;

	for (; *list; list++) {
		int n = snprintf(known + len, sizeof(known) - len, "%s%s",
				 len ? " " : "", *list);

		if (n < 0 || (size_t)n >= sizeof(known) - len)
			break;
		len += (size_t)n;
	}
	return usage_error("%s: unknown %s '%s' (known: %s)", flag, what, word,
			   known);
}

int apply_set(struct pb_variant *v, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char key[64], flag[128];
	int ret;

	snprintf(flag, sizeof(flag), "--set %s", arg);
	if (!eq || (size_t)(eq - arg) >= sizeof(key))
		return unknown_in_list(flag, "switch", eq ? "(too long)" : arg,
				       pb_variant_switches());
	memcpy(key, arg, (size_t)(eq - arg));
	key[eq - arg] = '\0';
	ret = pb_variant_set(v, key, eq + 1);
	if (ret == -ENOENT)
		return unknown_in_list(flag, "switch", key,
				       pb_variant_switches());
	if (ret == -EINVAL)
		return usage_error("%s: bad value '%s'; %s %s", flag, eq + 1,
				   key, pb_variant_switch_help(key));
	if (ret)
		return usage_error("%s: %s", flag, strerror(-ret));
	return 0;
}

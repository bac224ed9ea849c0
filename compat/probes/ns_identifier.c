// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: symbol namespaces are identifiers (Linux 6.12 and older), not
 * strings as in 6.13 and later, where this does not compile.
 */
#include <linux/export.h>
#include <linux/module.h>

MODULE_IMPORT_NS(KITE_PROBE);
MODULE_LICENSE("GPL");

// SPDX-License-Identifier: GPL-2.0-only
/* Probe: kzalloc_flex() exists. */
#include <linux/module.h>
#include <linux/slab.h>

struct kite_probe {
	unsigned int n;
	int v[] __counted_by(n);
};

void *kite_probe(void);
void *kite_probe(void)
{
	return kzalloc_flex(struct kite_probe, v, 4, GFP_KERNEL);
}
MODULE_LICENSE("GPL");

// SPDX-License-Identifier: GPL-2.0-only
/* Probe: kzalloc_obj() exists. */
#include <linux/module.h>
#include <linux/slab.h>

struct kite_probe {
	int a;
};

void *kite_probe(void);
void *kite_probe(void)
{
	return kzalloc_obj(struct kite_probe, GFP_KERNEL);
}
MODULE_LICENSE("GPL");

// SPDX-License-Identifier: BSD-2-Clause
/* placeholder until the SVG renderer lands */
#include <errno.h>
#include "render.h"

int render_svg(FILE *f, const struct timeline *tl, const struct render_opts *o)
{
	(void)f, (void)tl, (void)o;
	return -ENOSYS;
}

/* SPDX-License-Identifier: BSD-2-Clause */
/* The style sheet and script inlined in the HTML report (html_assets.c). */
#ifndef INFLIGHT_HTML_ASSETS_H
#define INFLIGHT_HTML_ASSETS_H

extern const char html_css[];
extern const char html_js[];

#endif /* INFLIGHT_HTML_ASSETS_H */

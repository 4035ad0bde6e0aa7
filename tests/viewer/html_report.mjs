// SPDX-License-Identifier: BSD-2-Clause
// Opens inflight's HTML report in headless Chromium (playwright-core) and prints, as one
// JSON line, what the page shows: its tables, the tooltip under the pointer at given
// instants (moved there with the mouse, before and after zooming with the wheel), the
// series of each mode, and every request the page made (it must make none: it is offline).
// Usage: node html_report.mjs NODE_MODULES_DIR REPORT.html T1 [T2...]   (seconds on its clock)
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'

const [modules, file, ...times] = process.argv.slice(2)
const require = createRequire(path.join(modules, 'x.js'))
const { chromium } = require('playwright-core')
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'inflight-html-'))
const browser = await chromium.launchPersistentContext(path.join(tmp, 'profile-dir'), {
	executablePath: '/usr/bin/chromium',
	headless: true,
	viewport: { width: 1300, height: 1000 },
	args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
		'--disable-background-networking', '--disable-component-update', '--disable-sync',
		'--no-first-run'],
})
const out = { error: null, requests: [], tables: {}, hover: [], zoomed: null, modes: {} }
try {
	const page = await browser.newPage()
	const errors = []
	page.on('pageerror', e => errors.push(String(e)))
	page.on('console', m => { if (m.type() === 'error') errors.push('console: ' + m.text()) })
	page.on('request', r => { if (!r.url().startsWith('file://')) out.requests.push(r.url()) })
	await page.goto('file://' + path.resolve(file))
	await page.waitForFunction(() => window.inflightView !== undefined, null, { timeout: 20000 })
	out.title = await page.title()
	out.tables = await page.evaluate(() => {
		const rows = sel => [...document.querySelectorAll(sel)].map(tr => ({
			stage: tr.dataset.stage, bytes: tr.dataset.bytes, mean_ms: tr.dataset.meanMs,
			stays: tr.dataset.stays, cells: [...tr.children].map(td => td.textContent) }))
		const pk = document.getElementById('peak-table')
		return { peak_bytes: pk.dataset.bytes, peak_time_s: pk.dataset.timeS,
			peak: rows('#peak-table tr[data-stage]'), dwell: rows('#dwell-table tr[data-stage]'),
			command: document.getElementById('command').textContent }
	})
	out.legend = await page.evaluate(() => [...document.querySelectorAll('#legend span')].map(s => s.textContent))
	out.modes.stage = await page.evaluate(() => window.inflightView.mode('stage') && window.inflightView.series())
	out.modes.class = await page.evaluate(() => window.inflightView.mode('class') && window.inflightView.series())
	await page.evaluate(() => window.inflightView.mode('stage'))
	const box = await page.locator('#chart').boundingBox()
	const mid = box.y + box.height / 2
	// the tooltip as the page shows it with the pointer over the column holding time t
	const hover = async t => {
		const c = await page.evaluate(t => window.inflightView.column(t), t)
		const x = await page.evaluate(c => window.inflightView.xOf((c.t0 + c.t1) / 2), c)
		await page.mouse.move(x, mid)
		await page.waitForTimeout(50)
		return await page.evaluate(() => {
			const tip = document.getElementById('tip')
			return { shown: tip.style.display, col: tip.dataset.col, total: tip.dataset.total,
				head: tip.querySelector('b').textContent,
				rows: [...tip.querySelectorAll('tr')].map(tr => ({ name: tr.dataset.name,
					bytes: tr.dataset.bytes, text: [...tr.children].map(td => td.textContent) })) }
		})
	}
	// zooms with the wheel, the pointer at t, until a column is wider than 4 pixels
	const zoomTo = async t => {
		await page.mouse.dblclick(box.x + box.width / 2, mid) // the whole run first
		for (let i = 0; i < 60; i++) {
			const c = await page.evaluate(t => window.inflightView.column(t), t)
			const w = await page.evaluate(c => window.inflightView.xOf(c.t1) - window.inflightView.xOf(c.t0), c)
			if (w > 4)
				break
			await page.mouse.move(await page.evaluate(t => window.inflightView.xOf(t), t), mid)
			await page.mouse.wheel(0, -100)
			await page.waitForTimeout(20)
		}
		return await page.evaluate(() => window.inflightView.view())
	}
	for (const t of times) {
		const view = await zoomTo(Number(t))
		out.hover.push({ t: Number(t), view, ...(await hover(Number(t))) })
	}
	// a drag to the left shows later times; the buttons zoom out to the whole run
	const before = await page.evaluate(() => window.inflightView.view())
	await page.mouse.move(box.x + box.width / 2, mid)
	await page.mouse.down()
	await page.mouse.move(box.x + box.width / 2 - 200, mid, { steps: 5 })
	await page.mouse.up()
	const panned = await page.evaluate(() => window.inflightView.view())
	await page.click('#reset')
	out.zoomed = { before, panned, whole: await page.evaluate(() => window.inflightView.view()),
		range: await page.evaluate(() => document.getElementById('range').textContent) }
	await page.screenshot({ path: path.join(tmp, 'shot.png'), fullPage: true })
	out.screenshot = path.join(tmp, 'shot.png')
	if (errors.length)
		out.error = errors.join('; ')
} catch (e) {
	out.error = String(e)
} finally {
	await browser.close()
}
console.log(JSON.stringify(out))

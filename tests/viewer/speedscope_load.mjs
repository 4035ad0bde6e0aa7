// SPDX-License-Identifier: BSD-2-Clause
// Opens a profile in speedscope (the npm package's own page) in headless Chromium, the way
// `speedscope FILE` does (a script that calls speedscope.loadFileFromBase64), and prints what
// the viewer shows as one JSON line: the page title, the profile names of its thread menu,
// whether it reported an import error, and what it drew: speedscope's own export of the
// imported profiles (its Export button), reduced per profile to the frames it opens and
// closes with their times and nesting depth, so a test can check every lane's extents.
// Usage: node speedscope_load.mjs NODE_MODULES_DIR PROFILE
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'

const [modules, profile] = process.argv.slice(2)
const require = createRequire(path.join(modules, 'x.js'))
const { chromium } = require('playwright-core')

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'inflight-viewer-'))
const loader = path.join(tmp, 'profile.js')
const name = path.basename(profile)
fs.writeFileSync(loader, `speedscope.loadFileFromBase64(${JSON.stringify(name)}, ` +
	`${JSON.stringify(fs.readFileSync(profile).toString('base64'))})`)
const page_url = 'file://' + path.join(modules, 'speedscope/dist/release/index.html') +
	'#localProfilePath=' + loader

// speedscope's file format: evented profiles of O(pen)/C(lose) events on shared frames
function drawn(exported) {
	const frames = exported.shared.frames.map(f => f.name)
	return exported.profiles.map(p => {
		const slices = []
		const open = []
		let depth = 0
		for (const e of p.events || []) {
			if (e.type === 'O') {
				open.push({ name: frames[e.frame], start: e.at, depth })
				depth++
			} else if (e.type === 'C') {
				const o = open.pop()
				depth--
				if (o)
					slices.push([o.name, o.start, e.at, o.depth])
			}
		}
		return { name: p.name, unit: p.unit, slices }
	})
}

// a fresh profile directory: playwright passes it as --user-data-dir
const browser = await chromium.launchPersistentContext(path.join(tmp, 'profile-dir'), {
	executablePath: '/usr/bin/chromium',
	headless: true,
	acceptDownloads: true,
	args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
		'--disable-background-networking', '--disable-component-update', '--disable-sync',
		'--no-first-run'],
})
const result = { title: '', profiles: [], error: null, drawn: null }
try {
	const page = await browser.newPage()
	const errors = []
	page.on('pageerror', e => errors.push(String(e)))
	page.on('dialog', d => { errors.push('dialog: ' + d.message()); d.dismiss() })
	await page.goto(page_url)
	// loaded: speedscope names the page after the file
	await page.waitForFunction(n => document.title.includes(n), name, { timeout: 20000 })
	result.title = await page.title()
	await page.screenshot({ path: path.join(tmp, 'shot.png') })
	result.screenshot = path.join(tmp, 'shot.png')
	// what it imported, as it exports it
	const exp = page.getByText(/Export/).first()
	if (await exp.count()) {
		const [download] = await Promise.all([page.waitForEvent('download', { timeout: 20000 }),
			exp.click()])
		const file = path.join(tmp, 'export.json')
		await download.saveAs(file)
		result.drawn = drawn(JSON.parse(fs.readFileSync(file, 'utf8')))
	}
	// the thread menu lists every profile the import produced
	const opener = page.getByText(/\d+\/\d+/).first()
	if (await opener.count()) {
		await opener.click()
		await page.waitForTimeout(300)
	}
	result.profiles = await page.evaluate(() =>
		[...document.querySelectorAll('*')]
			.filter(e => e.children.length === 0 && /\(pid \d+/.test(e.textContent))
			.map(e => e.textContent.trim()))
	result.profiles = [...new Set(result.profiles)].sort()
	result.body = (await page.evaluate(() => document.body.innerText)).slice(0, 1200)
	if (errors.length)
		result.error = errors.join('; ')
} catch (e) {
	result.error = String(e)
} finally {
	await browser.close()
}
console.log(JSON.stringify(result))

/** The chart library the HTML report inlines (uPlot's browser build and CSS), read from its installed package. */
import {readFile} from 'node:fs/promises'
import {createRequire} from 'node:module'
import path from 'node:path'

/** The chart library's text, as the HTML renderers (src/reporters/html.ts) inline it. */
export interface ChartLibrary {
  /** uPlot's IIFE build (defines window.uPlot). */
  script: string
  css: string
}

export async function loadChartLibrary(): Promise<ChartLibrary> {
  const dist = path.dirname(createRequire(import.meta.url).resolve('uplot/dist/uPlot.iife.min.js'))
  const [script, css] = await Promise.all([readFile(path.join(dist, 'uPlot.iife.min.js'), 'utf8'), readFile(path.join(dist, 'uPlot.min.css'), 'utf8')])
  return {script, css}
}

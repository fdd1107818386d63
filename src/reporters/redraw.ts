/**
 * A live view redrawn in place: each frame starts with the escape codes that move the cursor up
 * over the previous frame and erase it. The frame is fitted to the width first, so no line wraps
 * on the terminal and the count of lines to erase is the count the terminal shows; and cut to the
 * terminal's height, since the cursor cannot move up past the top of the screen (a taller frame
 * would leave its top behind, and the views would stack). Pure apart from remembering the
 * previous frame's height.
 */
import {fitText, type Layout} from './fit.js'

export class Redraw {
  private lastLines = 0

  frame(body: string, layout: Layout): string {
    // fitText escapes every control character in the body (an appName can hold a cursor move); the
    // redraw's own codes are added after it, so they are the only ones the terminal receives.
    const fitted = clipToHeight(fitText(body, layout), layout.height)
    const erase = this.lastLines > 0 ? `\u001B[${this.lastLines}F\u001B[0J` : ''
    this.lastLines = fitted.split('\n').length
    return erase + fitted
  }
}

/** At most `height − 1` lines (the cursor's line stays free), the last saying how many were cut. */
export function clipToHeight(text: string, height: number | undefined): string {
  const lines = text.split('\n')
  if (height === undefined || lines.length <= height - 1) return text
  const kept = Math.max(0, height - 2)
  return [...lines.slice(0, kept), `… ${lines.length - kept} more lines: a taller terminal shows them (or --ndjson, every sample)`].join('\n')
}

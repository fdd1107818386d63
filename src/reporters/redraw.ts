/**
 * A live view redrawn in place: each frame starts with the escape codes that move the cursor up
 * over the previous frame and erase it. The frame is fitted to the width first, so no line wraps
 * on the terminal and the count of lines to erase is the count the terminal shows. Pure apart
 * from remembering the previous frame's height.
 */
import {fitText, type Layout} from './fit.js'

export class Redraw {
  private lastLines = 0

  frame(body: string, layout: Layout): string {
    const fitted = fitText(body, layout)
    const erase = this.lastLines > 0 ? `\u001B[${this.lastLines}F\u001B[0J` : ''
    this.lastLines = fitted.split('\n').length
    return erase + fitted
  }
}

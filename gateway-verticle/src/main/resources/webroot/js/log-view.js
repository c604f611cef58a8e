// The log panel: turns chunks of job output (ANSI text from an untrusted agent) into lines of coloured text.
//
// Safety: ansi_up escapes HTML and is set to emit no links; its output is parsed in an inert <template> and
// rebuilt as text nodes and bare <span>s with ansi classes, their colours re-applied through CSSOM (the page's
// CSP allows no inline style attributes): no markup from the log ever reaches the document. Responsiveness: chunks are queued and rendered in requestAnimationFrame batches with
// a time budget; a line is cut after MAX_LINE_CHARS characters and only the last MAX_LINES lines stay in the
// DOM, with a note linking to the full text log.
import { AnsiUp } from '../vendor/ansi_up.js';

export const MAX_LINES = 5000;
export const MAX_LINE_CHARS = 4096;
const SLICE_CHARS = 4096;
const FRAME_BUDGET_MS = 10;
const ANSI_CLASS = /^ansi-[a-z-]+$/;
const STYLE_VALUES = {
  color: /^rgb\(\d{1,3}, ?\d{1,3}, ?\d{1,3}\)$/,
  'background-color': /^rgb\(\d{1,3}, ?\d{1,3}, ?\d{1,3}\)$/,
  'font-weight': /^bold$/,
  'font-style': /^italic$/,
  'text-decoration': /^underline$/,
  opacity: /^0\.\d+$/,
};

/** ansi_up with HTML escaping, colour classes, and OSC 8 hyperlinks reduced to their text. */
class TextOnlyAnsiUp extends AnsiUp {
  constructor() {
    super();
    this.escape_html = true;
    this.use_classes = true;
    this.url_allowlist = {};
  }

  // A terminal link becomes plain text whatever its scheme: agent output never yields a clickable link.
  process_hyperlink(packet) {
    return this.transform_to_html(this.with_state({ text: packet.text }));
  }
}

/**
 * Parses ansi_up's HTML inertly into runs of text, each with its ansi classes and CSS declarations; adjacent
 * runs that look the same are merged (ansi_up emits one span per escape sequence, which for coloured output
 * can be a span per character). Anything but a flat <span> is reduced to its text.
 */
function toRuns(html) {
  const template = document.createElement('template');
  // ansi_up's own tags are the only literal '<span style="' (text has < and " escaped); renamed, the parser
  // does not see inline styles, which the CSP would refuse one by one, each with a costly violation report.
  template.innerHTML = html.replaceAll('<span style="', '<span data-style="');
  const runs = [];
  for (const node of template.content.childNodes) {
    let key = '';
    let classes = [];
    let declarations = [];
    if (node.nodeType === Node.ELEMENT_NODE && node.tagName === 'SPAN') {
      classes = (node.getAttribute('class') ?? '').split(/\s+/).filter((c) => ANSI_CLASS.test(c));
      declarations = parseStyle(node.getAttribute('data-style'));
      key = `${classes.join(' ')}|${declarations.map((d) => d.join(':')).join(';')}`;
    }
    const text = node.textContent;
    const last = runs[runs.length - 1];
    if (last && last.key === key) {
      last.text += text;
    } else if (text) {
      runs.push({ key, classes, declarations, text });
    }
  }
  return runs;
}

function parseStyle(style) {
  if (!style) {
    return [];
  }
  const declarations = [];
  for (const part of style.split(';')) {
    const colon = part.indexOf(':');
    const property = part.slice(0, colon).trim();
    const value = part.slice(colon + 1).trim();
    if (colon > 0 && STYLE_VALUES[property]?.test(value)) {
      declarations.push([property, value]);
    }
  }
  return declarations;
}

const LINE_BREAK = /[\r\n]/g;

/** Index of the next \n or \r at or after `from`, or -1. */
function findBreak(text, from) {
  LINE_BREAK.lastIndex = from;
  const match = LINE_BREAK.exec(text);
  return match ? match.index : -1;
}

/** Where a slice may end without splitting a UTF-16 surrogate pair. */
function sliceEnd(text, from, max) {
  let end = Math.min(text.length, from + max);
  if (end < text.length && end > from + 1) {
    const code = text.charCodeAt(end - 1);
    if (code >= 0xd800 && code <= 0xdbff) {
      end -= 1;
    }
  }
  return end;
}

export class LogView {
  /**
   * @param scroller the scrolling panel
   * @param note     element that says how many earlier lines were dropped (with a link to the full log)
   * @param fullLogUrl URL of the whole log as text/plain
   */
  constructor(scroller, note, fullLogUrl, { maxLines = MAX_LINES, maxLineChars = MAX_LINE_CHARS } = {}) {
    this.scroller = scroller;
    this.note = note;
    this.fullLogUrl = fullLogUrl;
    this.maxLines = maxLines;
    this.maxLineChars = maxLineChars;
    this.queue = [];
    this.ansi = new Map();
    this.line = null;
    this.lineChars = 0;
    this.cut = null;
    this.cutChars = 0;
    this.lines = 0;
    this.dropped = 0;
    this.paused = false;
    this.scheduled = false;
    this.skipLineFeed = false;
  }

  /** Queues text of one stream (stdout, stderr or runner); it is rendered in the next frames. */
  append(stream, text) {
    if (text) {
      this.queue.push({ stream, text, pos: 0 });
      this.scroller.dataset.idle = 'false';
      this.schedule();
    }
  }

  /** A line of the page's own (not the job's), e.g. about a gap; ends the current line. */
  appendNotice(text) {
    this.queue.push({ notice: text });
    this.scroller.dataset.idle = 'false';
    this.schedule();
  }

  /** Whether everything queued has been rendered. */
  get idle() {
    return this.queue.length === 0;
  }

  setPaused(paused) {
    this.paused = paused;
    if (!paused) {
      this.scrollToEnd();
    }
  }

  schedule() {
    if (this.scheduled) {
      return;
    }
    this.scheduled = true;
    // A hidden tab gets no animation frames; keep draining so memory does not pile up meanwhile.
    const next = document.hidden ? (fn) => setTimeout(fn, 100) : requestAnimationFrame;
    next(() => {
      this.scheduled = false;
      this.renderBatch();
    });
  }

  renderBatch() {
    const started = performance.now();
    while (this.queue.length && performance.now() - started < FRAME_BUDGET_MS) {
      const item = this.queue[0];
      if (item.notice !== undefined) {
        this.writeNotice(item.notice);
        this.queue.shift();
      } else if (this.cut) {
        this.skipCutText(item);
      } else {
        const end = sliceEnd(item.text, item.pos, SLICE_CHARS);
        this.write(item.stream, item.text.slice(item.pos, end));
        item.pos = end;
      }
      if (item.text !== undefined && item.pos >= item.text.length) {
        this.queue.shift();
      }
    }
    this.trim();
    if (!this.paused) {
      this.scrollToEnd();
    }
    if (this.queue.length) {
      this.schedule();
    } else {
      // Everything received so far is on screen (tests wait for this together with the end of the log).
      this.scroller.dataset.idle = 'true';
    }
  }

  /** The rest of a cut line is only counted, not rendered: jump to its end in one search. */
  skipCutText(item) {
    this.forgetAnsiState(item.stream);
    const lineBreak = findBreak(item.text, item.pos);
    const end = lineBreak < 0 ? item.text.length : lineBreak;
    this.cutChars += end - item.pos;
    this.updateCut();
    item.pos = end;
    if (lineBreak >= 0) {
      // write() ends the line and remembers a \r, so a \n right after it does not add an empty line.
      this.write(item.stream, item.text[lineBreak]);
      item.pos = lineBreak + 1;
    }
  }

  /**
   * Writes text that may hold line breaks. A lone carriage return also ends the line: overwriting it like a
   * terminal would let agent output hide what it printed before, so every line stays visible.
   */
  write(stream, text) {
    let start = 0;
    if (this.skipLineFeed) {
      this.skipLineFeed = false;
      if (text.startsWith('\n')) {
        start = 1;
      }
    }
    while (start < text.length) {
      const lineBreak = findBreak(text, start);
      if (lineBreak < 0) {
        this.writeInLine(stream, text.slice(start));
        return;
      }
      this.writeInLine(stream, text.slice(start, lineBreak));
      this.endLine();
      start = lineBreak + 1;
      if (text[lineBreak] === '\r') {
        if (start === text.length) {
          this.skipLineFeed = true;
        } else if (text[start] === '\n') {
          start += 1;
        }
      }
    }
  }

  writeInLine(stream, text) {
    if (!text) {
      return;
    }
    const line = this.currentLine();
    if (this.cut) {
      this.forgetAnsiState(stream);
      this.cutChars += text.length;
      this.updateCut();
      return;
    }
    const room = this.maxLineChars - this.lineChars;
    let shown = text;
    if (text.length > room) {
      shown = text.slice(0, sliceEnd(text, 0, room));
      this.cutChars = text.length - shown.length;
    }
    this.lineChars += shown.length;
    this.render(line, stream, shown);
    if (shown !== text) {
      this.forgetAnsiState(stream);
      this.cut = document.createElement('span');
      this.cut.className = 'cut';
      line.append(this.cut);
      this.updateCut();
    }
  }

  render(line, stream, text) {
    let ansi = this.ansi.get(stream);
    if (!ansi) {
      ansi = new TextOnlyAnsiUp();
      this.ansi.set(stream, ansi);
    }
    const html = ansi.ansi_to_html(text);
    if (!html) {
      return;
    }
    let target = line.lastElementChild;
    if (!target || target.dataset.stream !== stream) {
      target = document.createElement('span');
      target.dataset.stream = stream;
      target.className = `s-${stream}`;
      line.append(target);
    }
    for (const run of toRuns(html)) {
      if (!run.key) {
        target.append(run.text);
        continue;
      }
      const span = document.createElement('span');
      span.className = run.classes.join(' ');
      span.textContent = run.text;
      target.append(span);
      // After insertion, through CSSOM: the page's CSP forbids style attributes, not style properties.
      for (const [property, value] of run.declarations) {
        span.style.setProperty(property, value);
      }
    }
  }

  /**
   * Text that is skipped never reaches ansi_up, so its colour state, and any half-read escape sequence it
   * buffers, no longer match the stream: start that stream afresh rather than let a stale sequence eat the
   * next line's first characters.
   */
  forgetAnsiState(stream) {
    this.ansi.delete(stream);
  }

  updateCut() {
    this.cut.textContent = ` … line cut here: ${this.cutChars.toLocaleString()} more characters are only in the full log`;
  }

  currentLine() {
    if (!this.line) {
      this.line = document.createElement('div');
      this.line.className = 'ln';
      this.scroller.append(this.line);
      this.lines += 1;
    }
    return this.line;
  }

  endLine() {
    this.currentLine();
    this.line = null;
    this.lineChars = 0;
    this.cut = null;
    this.cutChars = 0;
  }

  writeNotice(text) {
    if (this.line) {
      this.endLine();
    }
    const line = this.currentLine();
    line.classList.add('cut');
    line.textContent = text;
    this.endLine();
  }

  trim() {
    let excess = this.lines - this.maxLines;
    if (excess <= 0) {
      return;
    }
    while (excess > 0 && this.scroller.firstElementChild) {
      this.scroller.firstElementChild.remove();
      excess -= 1;
      this.lines -= 1;
      this.dropped += 1;
    }
    this.note.replaceChildren(
      `${this.dropped.toLocaleString()} earlier lines are not shown here (only the last ${this.maxLines.toLocaleString()} are kept). `);
    const link = document.createElement('a');
    link.href = this.fullLogUrl;
    link.target = '_blank';
    link.rel = 'noopener';
    link.textContent = 'Open the full log as text';
    this.note.append(link);
    this.note.hidden = false;
  }

  scrollToEnd() {
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }
}

// Follows a job's log over the gateway's websocket, with no gap and no duplicate across reconnects.
//
// The server sends every chunk with seq > after, in order. The follower remembers the last seq it handed to
// the view and, whenever the socket closes without an "end" frame (network, gateway restart, or a "resume"
// frame because this viewer fell behind), connects again with after=<that seq>, backing off 0.5 s to 5 s.
// Any chunk at or below the last seq is dropped, so a server that repeats itself cannot duplicate lines.

const MIN_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 5000;

export class LogFollower {
  /**
   * @param path     the websocket path, e.g. /api/v1/repos/r/agent-jobs/j/logs
   * @param handlers {onLog(frame), onStatus(status), onEnd(frame), onGap(from, to), onState(text)}
   */
  constructor(path, handlers) {
    this.path = path;
    this.handlers = handlers;
    this.lastSeq = 0;
    this.ended = false;
    this.stopped = false;
    this.socket = null;
    this.timer = null;
    this.backoff = MIN_BACKOFF_MS;
    this.connects = 0;
    this.resumeRequested = false;
    this.framesOnSocket = 0;
  }

  start() {
    this.connect();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.socket) {
      this.socket.close();
    }
  }

  connect() {
    this.timer = null;
    const url = new URL(`${this.path}?after=${this.lastSeq}`, location.href);
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const socket = new WebSocket(url);
    this.socket = socket;
    this.connects += 1;
    this.resumeRequested = false;
    this.framesOnSocket = 0;
    // Test hook: the page's current log socket, so a browser test can drop it mid-job and watch the resume.
    window.__spbTestSocket = socket;
    this.state(this.connects === 1 ? 'connecting…' : `reconnecting after #${this.lastSeq}…`);
    this.handlers.onConnect?.(this.connects);
    socket.addEventListener('open', () => this.state('live'));
    socket.addEventListener('message', (event) => this.onFrame(event.data));
    socket.addEventListener('close', () => this.onClose(socket));
  }

  onFrame(data) {
    let frame;
    try {
      frame = JSON.parse(data);
    } catch (e) {
      return;
    }
    switch (frame.type) {
      case 'log':
        this.onLog(frame);
        break;
      case 'status':
        this.handlers.onStatus(frame.status);
        break;
      case 'end':
        this.ended = true;
        this.state('ended');
        this.handlers.onEnd(frame);
        break;
      case 'resume':
        // The server closes next; reconnecting from our own last seq can neither skip nor repeat a chunk.
        this.resumeRequested = true;
        break;
      default:
        break;
    }
  }

  onLog(frame) {
    const seq = Number(frame.seq);
    if (!Number.isSafeInteger(seq) || seq <= this.lastSeq) {
      return;
    }
    if (seq > this.lastSeq + 1) {
      this.handlers.onGap(this.lastSeq + 1, seq - 1);
    }
    this.lastSeq = seq;
    this.framesOnSocket += 1;
    this.backoff = MIN_BACKOFF_MS;
    this.handlers.onLog(frame);
  }

  onClose(socket) {
    if (socket !== this.socket) {
      return;
    }
    this.socket = null;
    if (this.ended || this.stopped) {
      return;
    }
    // A server that asked us to resume after sending something gets us back at once: we are making progress.
    const delay = this.resumeRequested && this.framesOnSocket > 0 ? 0 : this.backoff;
    this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
    this.state(`disconnected; reconnecting in ${(delay / 1000).toFixed(1)} s`);
    this.timer = setTimeout(() => this.connect(), delay);
  }

  state(text) {
    this.handlers.onState(text);
  }
}

// Talking to the hub: JSON calls with the bearer token, and the live feed.
//
// The feed is Server-Sent Events read with fetch, not EventSource, because EventSource cannot
// send an Authorization header and the token must never travel in a URL. Reconnecting sends
// Last-Event-ID, so the hub replays exactly what was missed (or a fresh snapshot).

export class ApiError extends Error {
  constructor(status, body) {
    // The detail says what went wrong; the hint (when there is one) what to do about it.
    const said = body && body.detail ? [body.detail, body.hint].filter(Boolean).join("; ") : "";
    super(said || `HTTP ${status}`);
    this.status = status;
    this.code = (body && body.error) || "http_error";
    this.field = body && body.field;
  }
}

// Every route with a name or id in it is built here, one encoded segment per value, never by
// pasting strings: a name like "a/b" or "?x" then stays one segment. "." and ".." are dot
// segments to every URL parser even when percent-encoded, so no encoding makes them safe; the
// hub refuses such names, and a segment that is one anyway is refused here rather than sent.
export function route(strings, ...values) {
  let out = strings[0];
  values.forEach((value, i) => {
    const segment = String(value);
    if (segment === "" || !segment.replace(/\./g, "")) {
      throw new Error(`cannot address ${JSON.stringify(segment)} in a URL`);
    }
    out += encodeURIComponent(segment) + strings[i + 1];
  });
  return out;
}

export class Api {
  constructor(token) {
    this.token = token;
  }

  headers(extra = {}) {
    return { Authorization: `Bearer ${this.token}`, ...extra };
  }

  async call(method, path, body) {
    const init = { method, headers: this.headers(), cache: "no-store" };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    const text = await response.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (!response.ok) throw new ApiError(response.status, data);
    return data;
  }

  get(path, params) {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params || {})) {
      if (value !== undefined && value !== null && value !== "") query.set(key, String(value));
    }
    const suffix = query.toString() ? `?${query}` : "";
    return this.call("GET", path + suffix);
  }

  post(path, body = {}) {
    return this.call("POST", path, body);
  }

  async download(path) {
    const response = await fetch(path, { headers: this.headers(), cache: "no-store" });
    if (!response.ok) {
      let body = null;
      try {
        body = await response.json();
      } catch {
        body = null;
      }
      throw new ApiError(response.status, body);
    }
    const disposition = response.headers.get("Content-Disposition") || "";
    const match = /filename="([^"]+)"/.exec(disposition);
    return { blob: await response.blob(), name: match ? match[1] : "caucus-export" };
  }
}

// Follow the operator feed until close(). onEvent({type, data, id}); onState("live" |
// "connecting" | "reconnecting" | "refused").
export function follow(api, onEvent, onState) {
  let lastId = null;
  let closed = false;
  let controller = null;
  let delay = 500;

  async function once() {
    controller = new AbortController();
    const headers = api.headers({ Accept: "text/event-stream" });
    if (lastId) headers["Last-Event-ID"] = lastId;
    const response = await fetch("/operator/events", {
      headers,
      cache: "no-store",
      signal: controller.signal,
    });
    if (response.status === 401 || response.status === 403) {
      onState("refused");
      closed = true;
      return;
    }
    if (!response.ok || !response.body) throw new Error(`feed answered HTTP ${response.status}`);
    onState("live");
    delay = 500;
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const event = parse(block);
        if (!event) continue;
        if (event.id) lastId = event.id;
        onEvent(event);
      }
      // Let the page draw before the next chunk: a burst already buffered would otherwise be
      // taken in, and drawn chunk after chunk, all in one long task.
      await nextTask();
    }
  }

  async function loop() {
    onState("connecting");
    while (!closed) {
      try {
        await once();
      } catch (error) {
        if (closed) return;
      }
      if (closed) return;
      onState("reconnecting");
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 5000);
    }
  }

  loop();
  return {
    close() {
      closed = true;
      if (controller) controller.abort();
    },
  };
}

function nextTask() {
  if (globalThis.scheduler && typeof globalThis.scheduler.yield === "function") {
    return globalThis.scheduler.yield();
  }
  return new Promise((resolve) => setTimeout(resolve, 0));
}

function parse(block) {
  let type = "message";
  let id = null;
  const data = [];
  for (const line of block.split("\n")) {
    if (!line || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "event") type = value;
    else if (name === "id") id = value;
    else if (name === "data") data.push(value);
  }
  if (!data.length) return null;
  try {
    return { type, id, data: JSON.parse(data.join("\n")) };
  } catch {
    return null;
  }
}

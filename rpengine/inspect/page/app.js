// The inspector page: one EventSource to the game, plain DOM, no
// dependencies. Every value from the game or the engine goes in as text
// (textContent), never as markup.
"use strict";

const token = new URLSearchParams(location.search).get("token") || "";
const url = (path, params) => path + "?" + new URLSearchParams({ token, ...params });
const $ = (sel, root = document) => root.querySelector(sel);
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};
const maxLogRows = 500;      // rows drawn; the filter runs over all kept
const capWindowMs = 5 * 60e3;

const state = { session: {}, capacity: [], replies: new Map(), log: [], types: new Set(), requests: new Set() };

// ---- connection panel

function showSession(s) {
  state.session = s;
  const set = (f, v) => { $(`#session [data-field="${f}"]`).textContent = v === "" || v == null ? "–" : v; };
  set("transport", s.transport);
  set("state", s.state);
  set("clientVersion", s.clientVersion);
  set("id", s.id);
  set("queue", s.queueLimit ? `${s.queueDepth} of ${s.queueLimit}${s.accepting ? "" : " (not accepting)"}` : "–");
  set("mailboxDir", s.mailboxDir);
  set("speakers", s.speakers);
}

function drawCapacity() {
  const c = $("#capacity"), g = c.getContext("2d"), w = c.width, h = c.height;
  g.clearRect(0, 0, w, h);
  const now = Date.now(), from = now - capWindowMs;
  const pts = state.capacity.filter((p) => p.t >= from);
  const last = state.capacity[state.capacity.length - 1];
  const top = Math.max(1, ...pts.map((p) => Math.max(p.limit, p.depth)), last ? last.limit : 1);
  const x = (t) => ((t - from) / capWindowMs) * w, y = (v) => h - 4 - (v / top) * (h - 8);
  g.strokeStyle = "#2a333c";
  g.strokeRect(0.5, 0.5, w - 1, h - 1);
  const step = (key, color, dash) => {
    g.beginPath(); g.setLineDash(dash); g.strokeStyle = color; g.lineWidth = 1.5;
    let prev = state.capacity.filter((p) => p.t < from).pop();
    let cur = prev ? prev[key] : pts.length ? pts[0][key] : 0;
    g.moveTo(0, y(cur));
    for (const p of pts) { g.lineTo(x(p.t), y(cur)); cur = p[key]; g.lineTo(x(p.t), y(cur)); }
    g.lineTo(w, y(cur)); g.stroke();
  };
  if (state.capacity.length) { step("limit", "#8b97a3", [4, 3]); step("depth", "#5cc8ff", []); }
  g.setLineDash([]);
}
setInterval(drawCapacity, 1000);

function showCharacters(cs) {
  const tb = $("#characters tbody");
  tb.replaceChildren(...cs.map((c) => {
    const tr = el("tr");
    tr.dataset.key = c.key;
    for (const v of [c.key, c.name, (c.hash || "").slice(0, 12) + (c.synced ? " ✓" : ""), c.mode, c.bytes]) tr.append(el("td", "", String(v ?? "")));
    return tr;
  }));
}

function addNote(list, n) {
  const li = el("li", n.level, `${time(n.t)} ${n.text}`);
  list.append(li);
  while (list.children.length > 256) list.firstChild.remove();
}

// ---- replies

function replyRow(v) {
  let r = state.replies.get(v.id);
  if (!r) {
    const node = $("#reply-template").content.firstElementChild.cloneNode(true);
    node.dataset.id = v.id;
    $("#reply-list").prepend(node);
    $("#no-replies").hidden = true;
    r = { node, text: "", segs: new Map(), heard: null };
    state.replies.set(v.id, r);
  }
  r.view = v;
  return r;
}

function showReply(v) {
  const r = replyRow(v), n = r.node;
  $(".rid", n).textContent = v.id;
  $(".kind", n).textContent = v.kind;
  $(".character", n).textContent = v.character;
  const last = v.points[v.points.length - 1];
  const status = $(".status", n);
  status.textContent = v.error ? "error" : v.ended ? last.name : "streaming";
  status.className = "status pill " + (v.error || (last && last.name === "cancelled") ? "err" : v.ended ? "ok" : "run");
  // Timeline: the points in time order, each with the ms since the one before.
  const t0 = v.points.length ? v.points[0].t : 0, tn = last ? last.t : 0;
  $(".timeline", n).replaceChildren(...v.points.map((p, i) => {
    const li = el("li");
    li.dataset.point = p.name;
    li.dataset.t = p.t;
    li.append(el("b", "", p.name), " ", el("span", "delta", i ? `+${p.t - v.points[i - 1].t} ms` : time(p.t)));
    const engine = p.name === "text completed" ? v.textElapsedMs : p.name === "audio completed" ? v.audioElapsedMs : null;
    if (engine != null) li.append(" ", el("span", "engine", `engine ${Math.round(engine)} ms`));
    if (p.detail) li.append(" ", el("span", "detail", p.detail));
    return li;
  }), ...(v.points.length > 1 ? [el("li", "detail", `total ${tn - t0} ms`)] : []));
  $(".bar", n).replaceChildren(...v.points.map((p) => {
    const i = el("i", p.name.replace(/ /g, "-"));
    i.style.left = `calc(${tn > t0 ? ((p.t - t0) / (tn - t0)) * 100 : 0}% - 1px)`;
    i.title = p.name;
    return i;
  }));
  const card = $(".card", n);
  card.replaceChildren();
  if (v.card) {
    const c = v.card;
    const rows = [["card", `${c.mode}, ${c.bytes} bytes`], ["hash", c.hashPrefix || "(the engine computes it)"]];
    if (c.mode === "patch") rows.push(["patch", `${c.ops} ops from ${c.basePrefix}`]);
    for (const [k, val] of rows) card.append(el("dt", "", k), el("dd", "", val));
  }
  const pdl = $(".prompt dl", n);
  pdl.replaceChildren(...Object.keys(v.prompt || {}).sort().flatMap((k) => [el("dt", "", k), el("dd", "", v.prompt[k])]));
  for (const s of v.segments) showSegment(r, s);
  $(".short", n).textContent = v.audioShort || "";
  const notes = $(".notes", n);
  notes.replaceChildren();
  for (const x of v.notes) addNote(notes, x);
  if (v.text) setText(r, v.text);
}

function setText(r, s) {
  r.text = s;
  $(".text", r.node).textContent = s;
}

function showSegment(r, s) {
  let g = r.segs.get(s.index);
  if (!g) {
    const node = el("div", "segment");
    node.dataset.index = s.index;
    const play = el("button", "play", "▶");
    play.title = "play this segment";
    const box = el("div", "wave-box");
    const canvas = el("canvas", "wave");
    canvas.width = 600; canvas.height = 48;
    box.append(canvas, el("div", "cursor"));
    node.append(play, box, el("span", "info"), el("span", "spoken"));
    const list = $(".segments", r.node);
    const after = [...list.children].find((c) => +c.dataset.index > s.index);
    list.insertBefore(node, after || null);
    g = { node, loaded: false };
    r.segs.set(s.index, g);
    play.addEventListener("click", () => playSegment(r, g));
  }
  g.view = s;
  const n = g.node;
  n.dataset.samples = s.samples;
  n.dataset.complete = s.complete;
  $(".play", n).disabled = !s.complete;
  $(".info", n).textContent = s.dropped ? `not kept: ${s.dropped}` : s.complete ? `${s.seconds.toFixed(2)} s` : `${s.chunks}/${s.of} chunks`;
  $(".spoken", n).textContent = s.spokenText || "";
  if (s.complete && !g.loaded) { g.loaded = true; drawWave(r, g); }
}

const fetchWAV = (r, g) => fetch(url("wav", { reply: r.view.id, segment: g.view.index })).then((res) => {
  if (!res.ok) throw new Error(`wav: HTTP ${res.status}`);
  return res.arrayBuffer();
});

// drawWave decodes the segment's WAV without an output device
// (OfflineAudioContext) and draws min/max peaks per column.
async function drawWave(r, g) {
  try {
    const buf = await new OfflineAudioContext(1, 1, g.view.sampleRate).decodeAudioData(await fetchWAV(r, g));
    const data = buf.getChannelData(0), c = $("canvas", g.node), ctx = c.getContext("2d");
    const w = c.width, h = c.height, per = Math.max(1, Math.floor(data.length / w));
    let peak = 1e-6;
    for (const v of data) peak = Math.max(peak, Math.abs(v));
    ctx.fillStyle = "#5cc8ff";
    for (let x = 0; x < w; x++) {
      let lo = 0, hi = 0;
      for (let i = x * per, end = Math.min(data.length, i + per); i < end; i++) { const v = data[i]; if (v < lo) lo = v; if (v > hi) hi = v; }
      ctx.fillRect(x, (1 - hi / peak) * h / 2, 1, Math.max(1, ((hi - lo) / peak) * h / 2));
    }
    $(".info", g.node).title = `peak ${(20 * Math.log10(peak)).toFixed(1)} dBFS (drawn scaled to it)`;
    g.node.dataset.drawn = buf.duration.toFixed(4);
  } catch (e) {
    $(".info", g.node).textContent = String(e);
  }
}

let audioCtx = null;
// playSegment plays the segment's WAV through Web Audio and moves the
// cursor as it plays; data-played is the duration Web Audio decoded.
async function playSegment(r, g) {
  try {
    audioCtx = audioCtx || new AudioContext();
    const buf = await audioCtx.decodeAudioData(await fetchWAV(r, g));
    g.node.dataset.played = buf.duration.toFixed(4);
    await audioCtx.resume();
    const src = audioCtx.createBufferSource();
    src.buffer = buf;
    src.connect(audioCtx.destination);
    const start = audioCtx.currentTime;
    src.start();
    g.node.classList.add("playing");
    const cur = $(".cursor", g.node);
    const tick = () => {
      const f = Math.min(1, (audioCtx.currentTime - start) / buf.duration);
      cur.style.left = `${f * 100}%`;
      if (g.node.classList.contains("playing")) requestAnimationFrame(tick);
    };
    src.onended = () => g.node.classList.remove("playing");
    tick();
  } catch (e) {
    $(".info", g.node).textContent = String(e);
  }
}

// showHeard puts a speaker's heard position on the waveforms.
function showHeard(h) {
  const r = state.replies.get(h.id);
  if (!r) return;
  for (const [i, g] of r.segs) {
    const cur = $(".cursor", g.node);
    if (i < h.segment || (i === h.segment && h.done)) { g.node.classList.add("heard"); cur.style.left = "100%"; }
    else if (i === h.segment && g.view.seconds) { g.node.classList.add("heard"); cur.style.left = `${Math.min(100, h.offsetMs / (g.view.seconds * 10))}%`; }
    else g.node.classList.remove("heard");
  }
  r.node.dataset.heardMs = h.heardMs;
  r.node.dataset.heardSegment = h.segment;
  $(".heard", r.node).textContent = `heard ${(h.heardMs / 1000).toFixed(2)} s${h.interrupted ? " (interrupted)" : h.done ? " (all)" : ""}`;
}

// ---- protocol log

function addLog(e, redraw = true) {
  state.log.push(e);
  if (state.log.length > 200000) state.log.splice(0, 50000);
  const type = e.type || (e.note ? "(note)" : "");
  if (type && !state.types.has(type)) { state.types.add(type); addOption("#log-type", type); }
  if (e.request && !state.requests.has(e.request)) { state.requests.add(e.request); addOption("#log-request", e.request); }
  if (redraw && matches(e)) {
    const tb = $("#log tbody");
    tb.prepend(logRow(e));
    while (tb.children.length > maxLogRows) tb.lastChild.remove();
    countLog();
  }
}

function addOption(sel, v) {
  const s = $(sel), o = el("option", "", v);
  o.value = v;
  const after = [...s.options].slice(1).find((x) => x.value > v);
  s.insertBefore(o, after || null);
}

function matches(e) {
  const t = $("#log-type").value, r = $("#log-request").value;
  return (!t || (e.type || (e.note ? "(note)" : "")) === t) && (!r || e.request === r);
}

function logRow(e) {
  const tr = el("tr");
  tr.dataset.id = e.id;
  tr.dataset.type = e.type || "";
  tr.dataset.request = e.request || "";
  const dir = e.dir === "in" ? "←" : e.dir === "out" ? "→" : "•";
  const cells = [el("td", "", time(e.t)), el("td", e.dir || "", dir), el("td", "", e.type || e.note || ""), el("td", "", e.request || ""), el("td", "", e.bytes ? String(e.bytes) : "")];
  for (const c of cells) c.title = c.textContent;
  tr.append(...cells);
  tr.addEventListener("click", () => showJSON(tr, e));
  return tr;
}

function redrawLog() {
  const rows = [];
  for (let i = state.log.length - 1; i >= 0 && rows.length < maxLogRows; i--) if (matches(state.log[i])) rows.push(logRow(state.log[i]));
  $("#log tbody").replaceChildren(...rows);
  countLog();
}

function countLog() {
  const n = state.log.filter(matches).length;
  $("#log-count").textContent = n > maxLogRows ? `newest ${maxLogRows} of ${n}` : `${n} messages`;
}

async function showJSON(tr, e) {
  for (const s of document.querySelectorAll("#log tr.selected")) s.classList.remove("selected");
  tr.classList.add("selected");
  const pre = $("#json");
  if (!e.type || e.dir === "") { pre.textContent = e.note || ""; return; }
  try {
    const res = await fetch(url("log", { id: e.id }));
    pre.textContent = res.ok ? JSON.stringify(await res.json(), null, 2) : `HTTP ${res.status}: ${await res.text()}`;
    pre.className = "";
  } catch (err) {
    pre.textContent = String(err);
  }
}

$("#log-type").addEventListener("change", redrawLog);
$("#log-request").addEventListener("change", redrawLog);

const time = (t) => new Date(t).toISOString().slice(11, 23);

// ---- the stream

function reset(s) {
  state.replies.clear();
  state.log = [];
  $("#reply-list").replaceChildren();
  $("#notes").replaceChildren();
  showSession(s.session);
  state.capacity = s.capacity || [];
  drawCapacity();
  showCharacters(s.characters || []);
  for (const n of s.notes || []) addNote($("#notes"), n);
  for (const v of s.replies || []) showReply(v);
  $("#no-replies").hidden = state.replies.size > 0;
  for (const e of s.log || []) addLog(e, false);
  redrawLog();
}

const events = {
  snapshot: reset,
  session: showSession,
  capacity: (c) => { state.capacity.push(c); if (state.capacity.length > 2048) state.capacity.splice(0, 512); drawCapacity(); },
  characters: showCharacters,
  reply: showReply,
  text: (t) => { const r = state.replies.get(t.id); if (r) setText(r, t.whole ? t.text : r.text + t.text); },
  note: (n) => { const r = n.id && state.replies.get(n.id); addNote(r ? $(".notes", r.node) : $("#notes"), n.note); },
  log: (e) => addLog(e),
  heard: showHeard,
  forget: (id) => { const r = state.replies.get(id); if (r) { r.node.remove(); state.replies.delete(id); } },
};

const source = new EventSource(url("events"));
for (const [name, f] of Object.entries(events)) source.addEventListener(name, (e) => f(JSON.parse(e.data)));
source.onopen = () => { const l = $("#live"); l.textContent = "live"; l.className = "pill ok"; };
source.onerror = () => { const l = $("#live"); l.textContent = "reconnecting…"; l.className = "pill err"; };

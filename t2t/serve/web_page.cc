#include "t2t/serve/web_page.h"

namespace t2t {

// URL parameters (for links and tests): text (fills the box and translates
// at once), n_best, beam_size, glossary (lines), key (the API key, taken off
// the address bar once read). <body data-state> is "ready", "busy", "done"
// or "error".
const std::string& web_page() {
  static const std::string page = R"page(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>t2t translate</title>
<style>
  body { font-family: system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #1d2330; }
  header { background: #1d2330; color: #fff; padding: 10px 20px; display: flex; gap: 16px; align-items: baseline; }
  header h1 { font-size: 18px; margin: 0; }
  #status { font-size: 13px; opacity: 0.8; }
  main { display: grid; grid-template-columns: minmax(280px, 1fr) minmax(320px, 1.4fr); gap: 20px; padding: 20px; }
  textarea { width: 100%; box-sizing: border-box; font: inherit; padding: 8px; border: 1px solid #c5cad3; border-radius: 4px; }
  #source { height: 140px; }
  #glossary { height: 70px; font-family: monospace; font-size: 13px; }
  label { font-size: 13px; color: #4a5263; }
  .row { display: flex; gap: 14px; align-items: center; margin: 8px 0; flex-wrap: wrap; }
  input[type=number] { width: 56px; }
  button { background: #2f6fdf; color: #fff; border: 0; border-radius: 4px; padding: 8px 18px; font-size: 15px; cursor: pointer; }
  button:disabled { background: #8aa6d8; }
  #error { color: #b3261e; white-space: pre-wrap; margin: 8px 0; }
  .card { background: #fff; border: 1px solid #dde1e8; border-radius: 6px; padding: 12px 14px; margin-bottom: 14px; }
  .translation { font-size: 20px; margin: 2px 0 8px; }
  .nbest { margin: 4px 0 8px; padding-left: 22px; font-size: 14px; }
  .nbest li { margin: 2px 0; }
  .score { color: #6b7385; font-family: monospace; margin-left: 8px; font-size: 12px; }
  .terms { font-size: 13px; color: #2d6a3e; }
  .terms .missed { color: #b3261e; }
  svg.alignment { display: block; margin-top: 6px; overflow: visible; }
  svg text { font-size: 15px; cursor: default; }
  line.link { stroke: #2f6fdf; stroke-opacity: 0.55; stroke-width: 1.6; }
  line.link.hot { stroke: #e8590c; stroke-opacity: 1; stroke-width: 2.6; }
  text.hot { fill: #e8590c; font-weight: 600; }
  .hint { font-size: 12px; color: #6b7385; }
</style>
</head>
<body data-state="ready">
<header><h1>t2t translate</h1><span id="status">connecting…</span></header>
<main>
  <section>
    <label for="source">Source text, one sentence per line</label>
    <textarea id="source" placeholder="Where is the station?"></textarea>
    <div class="row">
      <label>beam <input id="beam" type="number" min="1" max="16" value="4"></label>
      <label>n-best <input id="nbest" type="number" min="1" max="16" value="3"></label>
      <label><input id="align" type="checkbox" checked> alignment</label>
      <button id="go">Translate</button>
    </div>
    <label for="glossary">Glossary: one <code>source term ⇥ target term</code> per line (a tab, or <code>=&gt;</code>)</label>
    <textarea id="glossary" placeholder="station =&gt; 车站"></textarea>
    <div class="hint">Ctrl+Enter translates. Terms found in the source must appear in the translation.</div>
    <div id="error"></div>
  </section>
  <section id="results"></section>
</main>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const key = params.get("key");
if (key !== null) {
  params.delete("key");
  const rest = params.toString();
  history.replaceState(null, "", location.pathname + (rest ? "?" + rest : ""));
}
function headers() {
  const h = { "Content-Type": "application/json" };
  if (key) h["Authorization"] = "Bearer " + key;
  return h;
}
function setState(s) { document.body.dataset.state = s; }

function parseGlossary(text) {
  const out = [];
  text.split("\n").forEach((raw, n) => {
    const line = raw.trim();
    if (!line) return;
    let parts = raw.includes("\t") ? raw.split("\t") : line.split("=>");
    parts = parts.map((p) => p.trim());
    if (parts.length !== 2 || !parts[0] || !parts[1])
      throw new Error("glossary line " + (n + 1) + ": write 'source term => target term' (or a tab between them)");
    out.push(parts);
  });
  return out;
}

function el(tag, attrs, text) {
  const ns = ["svg", "line", "text"].includes(tag) ? "http://www.w3.org/2000/svg" : null;
  const e = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// Source words on top, target words below, a line per hard link; hovering
// a word lights up its links.
function drawAlignment(a) {
  const svg = el("svg", { class: "alignment", width: 10, height: 90 });
  $("results").appendChild(svg);  // measured in place, moved by the caller
  const row = (words, y, cls) => {
    let x = 4;
    return words.map((w, i) => {
      const t = el("text", { x: x, y: y, class: cls, "data-index": i }, w);
      svg.appendChild(t);
      const width = t.getComputedTextLength();
      const mid = x + width / 2;
      x += width + 12;
      return { node: t, mid: mid, end: x };
    });
  };
  const src = row(a.source_words || [], 18, "src-word");
  const tgt = row(a.target_words || [], 84, "tgt-word");
  const width = Math.max(src.length ? src[src.length - 1].end : 0, tgt.length ? tgt[tgt.length - 1].end : 0);
  svg.setAttribute("width", Math.max(40, width));
  const links = [];
  for (const [i, j] of a.hard || []) {
    if (!src[i] || !tgt[j]) continue;
    const line = el("line", { class: "link", x1: src[i].mid, y1: 24, x2: tgt[j].mid, y2: 68, "data-source": i, "data-target": j });
    svg.insertBefore(line, svg.firstChild);
    links.push({ line: line, i: i, j: j });
  }
  const light = (side, index, on) => {
    for (const l of links) {
      if ((side === "s" ? l.i : l.j) !== index) continue;
      l.line.classList.toggle("hot", on);
      src[l.i].node.classList.toggle("hot", on);
      tgt[l.j].node.classList.toggle("hot", on);
    }
  };
  src.forEach((w, i) => { w.node.onmouseenter = () => light("s", i, true); w.node.onmouseleave = () => light("s", i, false); });
  tgt.forEach((w, j) => { w.node.onmouseenter = () => light("t", j, true); w.node.onmouseleave = () => light("t", j, false); });
  return svg;
}

function render(texts, answer, nbest) {
  const results = $("results");
  results.replaceChildren();
  texts.forEach((text, k) => {
    const card = el("div", { class: "card" });
    results.appendChild(card);
    const hyps = nbest > 1 ? answer.translations[k] : [answer.translations[k]];
    const scores = nbest > 1 ? answer.scores[k] : [answer.scores[k]];
    card.appendChild(el("div", { class: "source hint" }, text));
    card.appendChild(el("div", { class: "translation" }, hyps.length ? hyps[0] : ""));
    if (nbest > 1) {
      const list = el("ol", { class: "nbest" });
      hyps.forEach((h, n) => {
        const li = el("li", { class: "hyp" }, h);
        li.appendChild(el("span", { class: "score" }, Number(scores[n]).toFixed(3)));
        list.appendChild(li);
      });
      card.appendChild(list);
    } else {
      card.appendChild(el("div", { class: "score" }, "score " + Number(scores[0]).toFixed(3)));
    }
    const terms = answer.constraints ? answer.constraints[k] : [];
    if (terms && terms.length) {
      const met = nbest > 1 ? answer.constraints_met[k][0] : answer.constraints_met[k];
      const div = el("div", { class: "terms" }, "terms: ");
      terms.forEach((t, n) => div.appendChild(el("span", { class: met[n] ? "met" : "missed" }, t + (met[n] ? " ✓ " : " ✗ "))));
      card.appendChild(div);
    }
    if (answer.alignments) {
      const a = nbest > 1 ? answer.alignments[k][0] : answer.alignments[k];
      if (a && a.source_words) card.appendChild(drawAlignment(a));
    }
  });
}

async function translate() {
  $("error").textContent = "";
  const texts = $("source").value.split("\n").map((s) => s.trim()).filter((s) => s.length);
  if (!texts.length) { $("error").textContent = "Type a sentence to translate."; return; }
  const nbest = Math.max(1, parseInt($("nbest").value || "1", 10));
  const beam = Math.max(nbest, parseInt($("beam").value || "4", 10));
  let glossary;
  try { glossary = parseGlossary($("glossary").value); } catch (e) { $("error").textContent = e.message; setState("error"); return; }
  const body = { text: texts, beam_size: beam, n_best: nbest, alignment: $("align").checked };
  if (glossary.length) body.glossary = glossary;
  setState("busy");
  $("go").disabled = true;
  try {
    const res = await fetch("/v1/translate", { method: "POST", headers: headers(), body: JSON.stringify(body) });
    const answer = await res.json().catch(() => ({ error: "the server's answer was not JSON" }));
    if (!res.ok) throw new Error("HTTP " + res.status + ": " + (answer.error || res.statusText));
    render(texts, answer, nbest);
    setState("done");
  } catch (e) {
    $("error").textContent = e.message;
    setState("error");
  } finally {
    $("go").disabled = false;
  }
}

async function status() {
  try {
    const res = await fetch("/ready");
    const s = await res.json();
    $("status").textContent = res.ok ? "model step " + s.model_step + " · " + s.checkpoint : (s.error || "not ready");
  } catch (e) {
    $("status").textContent = "server unreachable";
  }
}

$("go").onclick = translate;
document.addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) translate(); });
if (params.has("n_best")) $("nbest").value = params.get("n_best");
if (params.has("beam_size")) $("beam").value = params.get("beam_size");
if (params.has("glossary")) $("glossary").value = params.get("glossary");
status();
if (params.has("text")) { $("source").value = params.get("text"); translate(); }
</script>
</body>
</html>
)page";
  return page;
}

const std::string& web_page_key_needed() {
  static const std::string page = R"page(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>t2t: API key needed</title></head>
<body style="font-family: system-ui, sans-serif; margin: 40px">
<h1>This t2t server needs an API key</h1>
<p>Open the page with your key: <code>/?key=YOUR_KEY</code> (a key of the server's API key file).
The page then sends it with each request and takes it off the address bar.</p>
</body></html>
)page";
  return page;
}

}  // namespace t2t

// rag_lab web page. Every piece of text from the corpus or the server is inserted with
// textContent (through el()), never as HTML.
"use strict";

const $ = (selector) => document.querySelector(selector);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

const STATUS_WORDS = {
  answered: "Answered",
  refused: "Refused",
  partial: "Partly answered",
  needs_clarification: "Needs clarification",
};

const REASON_WORDS = {
  index_stale: "The files changed after the index was built, so nothing is answered until the index is rebuilt.",
  source_verification_failed: "A source no longer matches the bytes it was indexed from, so it cannot be cited.",
  conflicting_evidence: "The sources disagree. No source is preferred, so there is no answer; every side is shown below.",
  no_supporting_evidence: "No source in the corpus supports an answer. That is not evidence that the answer is no.",
  evidence_not_retrieved: "The corpus has this information, but the search did not bring it up. Try more specific words or a larger top_k.",
  excluded_by_budget: "The evidence was found but did not fit in the context budget.",
  unsupported_attribute: "Images are only measured for colour, size and shape; the question asks for something else.",
  reserved_field: "That field is kept as data and is never given as an answer.",
  subject_without_field: "The question names a subject but not which of its fields you want.",
  field_without_subject: "The question names a field but no subject the corpus knows.",
  ambiguous_subject: "The question could mean more than one subject.",
  ambiguous_field: "The question could mean more than one field.",
  partial_support: "Only part of the question is supported by the sources.",
};

let lastCitations = [];

function citeLabel(cite) {
  return cite.source + (cite.line ? ":" + cite.line : "");
}

function citeButton(cite, number) {
  const button = el("button", "cite", "[" + number + "]");
  button.type = "button";
  button.dataset.evidenceId = cite.evidence_id;
  button.title = citeLabel(cite);
  button.addEventListener("click", () => openCitation(cite, number, button));
  return button;
}

function renderMissing(result, box) {
  const items = [];
  const stale = result.stale;
  if (stale) {
    for (const kind of ["added", "deleted", "modified"]) {
      for (const path of stale[kind] || []) items.push(kind + ": " + path);
    }
  }
  const failure = result.verification_failure;
  if (failure) {
    items.push(failure.source + " (" + failure.evidence_id + ") failed the " + failure.failed_check + " check: " + failure.detail);
  }
  for (const slot of result.slots || []) {
    if (slot.status !== "answered" && !slot.sides) items.push(slot.subject + " " + slot.field + ": " + slot.message);
  }
  const clar = result.clarification;
  if (clar) {
    if (clar.fields) items.push(clar.subject + " has the fields: " + (clar.fields.join("、") || "none that can be answered"));
    if (clar.subjects) items.push("subjects with " + clar.field + ": " + clar.subjects.join("、") + (clar.more ? " …" : ""));
    if (clar.options) items.push("possible meanings: " + clar.options.join("、"));
  }
  if (!items.length) return;
  const section = el("div", "missing");
  section.append(el("p", null, result.status === "needs_clarification" ? "What to add:" : "What is missing:"));
  const list = el("ul");
  for (const item of items) list.append(el("li", null, item));
  section.append(list);
  box.append(section);
}

function renderSides(result, numbers, box) {
  for (const slot of result.slots || []) {
    if (!slot.sides) continue;
    box.append(el("p", "why", slot.subject + " " + slot.field + " — " + slot.sides.length + " different values:"));
    const row = el("div", "sides");
    for (const side of slot.sides) {
      const column = el("div", "side");
      column.append(el("div", "value", side.value));
      const list = el("ul");
      for (const id of side.evidence_ids) {
        const cite = result.citations.find((c) => c.evidence_id === id);
        const item = el("li");
        if (cite) {
          item.append(citeButton(cite, numbers.get(id)), " ", el("span", "source", citeLabel(cite)));
        } else {
          item.append(el("span", "source", id));
        }
        list.append(item);
      }
      column.append(list);
      row.append(column);
    }
    box.append(row);
  }
}

function renderResult(result) {
  const box = $("#result");
  box.replaceChildren();
  box.dataset.status = result.status;
  box.append(el("span", "status " + result.status, STATUS_WORDS[result.status] || result.status));
  const numbers = new Map();
  result.citations.forEach((cite, i) => numbers.set(cite.evidence_id, i + 1));
  lastCitations = result.citations;
  if (result.answer !== null && result.answer !== undefined) {
    const answer = el("div", "answer");
    answer.append(el("span", "answer-text", result.answer));
    result.citations.forEach((cite, i) => {
      const sup = el("sup");
      sup.append(citeButton(cite, i + 1));
      answer.append(sup);
    });
    box.append(answer);
  }
  if (result.status !== "answered" && result.reason) {
    box.append(el("p", "why", REASON_WORDS[result.reason] || result.reason));
  }
  box.append(el("p", "message", result.message));
  renderSides(result, numbers, box);
  renderMissing(result, box);
  if (result.citations.length) {
    box.append(el("p", null, "Sources (" + result.same_key_sources_checked + " checked against the original bytes):"));
    const list = el("ol", "citations");
    result.citations.forEach((cite, i) => {
      const item = el("li");
      item.append(citeButton(cite, i + 1), " ", el("span", "source", citeLabel(cite)));
      list.append(item);
    });
    box.append(list);
  }
}

function renderError(box, error) {
  box.replaceChildren();
  box.dataset.status = "error";
  box.append(el("p", "error", error.type), el("p", "message", error.message));
}

// The caller the page asks as (null: the server's default caller).
function currentPrincipal() {
  const name = $("#as_name").value.trim();
  if (!name) return null;
  const groups = $("#groups").value.split(",").map((g) => g.trim()).filter((g) => g);
  return { name: name, groups: groups };
}

// The evidence endpoints take the same caller as query parameters.
function withPrincipal(url) {
  const who = currentPrincipal();
  if (!who) return url;
  const query = new URLSearchParams({ as: who.name, groups: who.groups.join(",") });
  return url + "?" + query.toString();
}

async function ask(event) {
  event.preventDefault();
  const body = { question: $("#question").value };
  const topK = parseInt($("#top_k").value, 10);
  const budget = parseInt($("#budget").value, 10);
  if (!Number.isNaN(topK)) body.top_k = topK;
  if (!Number.isNaN(budget)) body.budget = budget;
  if ($("#as_of").value) body.as_of = $("#as_of").value;
  const who = currentPrincipal();
  if (who) body.principal = { name: who.name, groups: who.groups };
  const box = $("#result");
  box.replaceChildren(el("p", "message", "…"));
  try {
    const response = await fetch("/api/ask", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    const data = await response.json();
    if (response.ok) renderResult(data);
    else renderError(box, data.error);
  } catch (err) {
    renderError(box, { type: "network", message: String(err) });
  }
}

function renderFile(view, pane) {
  const excerpt = view.excerpt;
  if (!excerpt) {
    pane.append(el("p", "error", "The file cannot be read now."));
    return;
  }
  const table = el("table", "file");
  const mark = excerpt.highlight;
  for (const line of excerpt.lines) {
    const row = el("tr");
    row.append(el("td", "num", line.number));
    const cell = el("td", "text");
    if (mark && mark.line === line.number) {
      row.className = "cited";
      const chars = Array.from(line.text); // code points, like the span
      cell.append(chars.slice(0, mark.start).join(""));
      cell.append(el("mark", "span", chars.slice(mark.start, mark.end).join("")));
      cell.append(chars.slice(mark.end).join(""));
    } else {
      cell.textContent = line.text;
    }
    row.append(cell);
    table.append(row);
  }
  pane.append(table);
}

function renderImage(view, pane) {
  const figure = el("div", "figure");
  const img = el("img");
  img.alt = view.text || "";
  const box = el("div", "bbox");
  box.hidden = true;
  img.addEventListener("load", () => {
    const scale = img.clientWidth / img.naturalWidth;
    const [x0, y0, x1, y1] = view.bbox;
    box.style.left = x0 * scale - 2 + "px";
    box.style.top = y0 * scale - 2 + "px";
    box.style.width = (x1 - x0) * scale + 4 + "px";
    box.style.height = (y1 - y0) * scale + 4 + "px";
    box.hidden = false;
  });
  img.addEventListener("error", () => pane.append(el("p", "error", "The image failed re-verification and is not shown.")));
  img.src = withPrincipal(view.image_url);
  figure.append(img, box);
  pane.append(figure, el("p", "message", "bbox " + JSON.stringify(view.bbox) + " · " + (view.text || "")));
}

async function openCitation(cite, number, button) {
  document.querySelectorAll(".cite.active").forEach((b) => b.classList.remove("active"));
  document.querySelectorAll('.cite[data-evidence-id="' + CSS.escape(cite.evidence_id) + '"]').forEach((b) => b.classList.add("active"));
  const pane = $("#viewer");
  pane.hidden = false;
  pane.replaceChildren(el("p", "message", "…"));
  const response = await fetch(withPrincipal("/api/evidence/" + encodeURIComponent(cite.evidence_id)));
  const view = await response.json();
  if (!response.ok) {
    renderError(pane, view.error);
    return;
  }
  pane.replaceChildren();
  pane.dataset.evidenceId = view.evidence_id;
  pane.append(el("h2", null, "[" + number + "] " + citeLabel(view)));
  const when = new Date(view.checked_at).toLocaleTimeString();
  const verified = view.verified
    ? el("p", "verified ok", "✓ re-verified just now (" + when + "): " + view.verification.checks.join(", "))
    : el("p", "verified failed", "✗ failed the " + view.verification.failed_check + " check (" + when + "): " + view.verification.detail);
  pane.append(verified);
  const sha = el("p", "sha");
  sha.append("sha256 " + view.sha256);
  if (view.current_sha256 && view.current_sha256 !== view.sha256) sha.append(" (now " + view.current_sha256 + ")");
  pane.append(sha);
  if (view.span) pane.append(el("p", "message", "span [" + view.span[0] + ", " + view.span[1] + ") code points, line " + view.line));
  if (view.modality === "image") renderImage(view, pane);
  else renderFile(view, pane);
  const marked = pane.querySelector("mark");
  if (marked) marked.scrollIntoView({ block: "center" });
}

document.addEventListener("DOMContentLoaded", () => {
  $("#ask").addEventListener("submit", ask);
  $("#question").focus();
});

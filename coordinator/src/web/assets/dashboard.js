// The dashboard's only script. Pages are rendered on the server; this script
// (1) swaps in the page's fresh live part when the server announces a commit,
// (2) sorts and filters tables, and (3) sends admin actions with the token the
// user typed (kept in this tab's sessionStorage, sent as a bearer header).
"use strict";
(function () {
  var sortState = {};

  // Numeric cells carry their number in data-value; the rest sort by text.
  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) return "";
    var v = cell.getAttribute("data-value");
    if (v !== null && v !== "" && !isNaN(Number(v))) return Number(v);
    return (v === null ? cell.textContent : v).trim().toLowerCase();
  }

  function applySort(table) {
    var st = sortState[table.id];
    if (!st) return;
    var body = table.tBodies[0];
    if (!body) return;
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, st.index), y = cellValue(b, st.index);
      var c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
      return st.desc ? -c : c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(table.querySelectorAll("th[data-sort]"), function (th) {
      th.classList.remove("asc", "desc");
      if (th.cellIndex === st.index) th.classList.add(st.desc ? "desc" : "asc");
    });
  }

  function applyFilter() {
    var input = document.getElementById("filter");
    if (!input) return;
    var q = input.value.trim().toLowerCase();
    Array.prototype.forEach.call(document.querySelectorAll("table.filterable tbody tr"), function (tr) {
      tr.style.display = !q || tr.textContent.toLowerCase().indexOf(q) >= 0 ? "" : "none";
    });
  }

  function wire(root) {
    Array.prototype.forEach.call(root.querySelectorAll("table[id] th[data-sort]"), function (th) {
      th.addEventListener("click", function () {
        var table = th.closest("table");
        var st = sortState[table.id];
        sortState[table.id] = { index: th.cellIndex, desc: st && st.index === th.cellIndex ? !st.desc : false };
        applySort(table);
      });
    });
    Array.prototype.forEach.call(root.querySelectorAll("table[id]"), applySort);
    Array.prototype.forEach.call(root.querySelectorAll("button[data-action]"), function (b) {
      b.addEventListener("click", function () { act(b); });
    });
    applyFilter();
  }

  function status(text, isError) {
    var el = document.getElementById("action-status");
    if (!el) return;
    el.textContent = text;
    el.className = isError ? "err" : "";
  }

  function act(button) {
    var tokenInput = document.getElementById("admin-token");
    var token = tokenInput ? tokenInput.value.trim() : "";
    if (token) sessionStorage.setItem("adminToken", token);
    var run = button.getAttribute("data-run");
    var action = button.getAttribute("data-action");
    var body = null;
    if (action === "exclude") {
      body = JSON.stringify({ worker: button.getAttribute("data-worker"), exclude: button.getAttribute("data-exclude") === "true" });
    } else if (action === "extend") {
      // The coordinator checks the number (even, more than the run has) and names what is wrong.
      var games = document.getElementById("add-games");
      body = JSON.stringify({ games: games ? Number(games.value) : null });
    }
    var headers = { "Content-Type": "application/json" };
    if (token) headers["Authorization"] = "Bearer " + token;
    fetch("/api/runs/" + encodeURIComponent(run) + "/" + action, { method: "POST", headers: headers, body: body, credentials: "same-origin" })
      .then(function (r) {
        return r.text().then(function (t) {
          var msg = t;
          try { var j = JSON.parse(t); msg = j.error || ("run " + run + ": " + (j.state || "done")); } catch (e) { /* plain text */ }
          status(r.ok ? action + " done: " + msg : action + " refused (" + r.status + "): " + msg, !r.ok);
          if (r.ok) refresh();
        });
      })
      .catch(function (e) { status(action + " failed: " + e, true); });
  }

  var pending = false, lastRefresh = 0;
  function refresh() {
    var live = document.getElementById("live");
    if (!live || pending) return;
    pending = true;
    var url = location.pathname + (location.search ? location.search + "&" : "?") + "fragment=1";
    fetch(url, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        live.innerHTML = html;
        wire(live);
        lastRefresh = Date.now();
        var stamp = document.getElementById("updated");
        if (stamp) stamp.textContent = "updated " + new Date().toLocaleTimeString();
      })
      .catch(function () { /* keep what is shown; the next event retries */ })
      .then(function () { pending = false; });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var saved = sessionStorage.getItem("adminToken");
    var tokenInput = document.getElementById("admin-token");
    if (saved && tokenInput && !tokenInput.value) tokenInput.value = saved;
    var filter = document.getElementById("filter");
    if (filter) filter.addEventListener("input", applyFilter);
    wire(document);
    if (window.EventSource && document.getElementById("live")) {
      var es = new EventSource("/api/events");
      es.addEventListener("change", refresh);
      var ind = document.getElementById("updated");
      es.onerror = function () { if (ind) ind.textContent = "reconnecting…"; };
    }
  });
})();

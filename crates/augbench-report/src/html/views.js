// Reference switch and views, from the measurements embedded as JSON (#augbench-data).
// The URL hash takes `ref=<library>` (the reference), `view=<table|bars|pipeline|video|
// heatmap|charts|ab>` (the tab of every group that has it) and `sort=` (sort.js), joined by `&`.
// The A/B view only draws what the page embedded from `ab::compare` (no verdict is made here).
// After applying them the page records <body data-reference> and <body data-view>.
(function () {
  "use strict";
  var node = document.getElementById("augbench-data");
  if (!node) {
    return;
  }
  var data = JSON.parse(node.textContent);
  var COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
    "#7f7f7f", "#bcbd22", "#17becf"];
  var each = function (list, f) { Array.prototype.forEach.call(list, f); };

  function colour(lib) {
    return COLOURS[Math.max(0, data.libraries.indexOf(lib)) % COLOURS.length];
  }
  function decimals(x) {
    var a = Math.abs(x);
    return a >= 100 ? 0 : a >= 10 ? 1 : 2;
  }
  function num(x) {
    var d = decimals(x);
    return x.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });
  }
  function times(x) {
    return x.toFixed(2) + "\u00d7";
  }
  function median(xs) {
    var s = xs.slice().sort(function (a, b) { return a - b; });
    var m = (s.length - 1) / 2;
    return (s[Math.floor(m)] + s[Math.ceil(m)]) / 2;
  }
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" }[c];
    });
  }
  function params() {
    var out = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i > 0) {
        out[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1));
      }
    });
    return out;
  }

  // Column order for a reference: the reference first (when the group has it), then by name.
  function order(g, ref) {
    var libs = g.libraries.map(function (l) { return l[0]; }).sort();
    if (libs.indexOf(ref) >= 0) {
      libs.splice(libs.indexOf(ref), 1);
      libs.unshift(ref);
    }
    return libs;
  }
  function measured(row, lib) {
    var c = row.cells[lib];
    return c && c.s === "ok" ? c.v : null;
  }
  // The reference's speedup over `other` at a row: paired when both were timed in the same
  // rounds, else the ratio of the medians (as the written tables compute it).
  function ratio(row, ref, other) {
    var a = measured(row, ref);
    var b = measured(row, other);
    if (a === null || b === null) {
      return null;
    }
    var p = row.paired && row.paired[ref + ">" + other];
    return p ? { value: p[0], lo: p[1], hi: p[2], paired: true } : { value: a / b, paired: false };
  }
  function rowSpeedup(row, ref, libs) {
    var best = null;
    libs.forEach(function (l) {
      var v = measured(row, l);
      if (l !== ref && v !== null && (best === null || v > measured(row, best))) {
        best = l;
      }
    });
    return best === null ? null : ratio(row, ref, best);
  }
  function speedupText(r) {
    if (!r) {
      return "n/a";
    }
    return r.paired ? times(r.value) + " [" + r.lo.toFixed(2) + "\u2013" + r.hi.toFixed(2) + "]" : times(r.value);
  }

  function reorderCells(tr, libs) {
    var cells = Array.prototype.slice.call(tr.cells);
    var tail = cells.filter(function (c, i) { return i > 0 && !c.hasAttribute("data-lib"); });
    libs.forEach(function (lib) {
      cells.forEach(function (c) {
        if (c.getAttribute("data-lib") === lib) {
          tr.appendChild(c);
        }
      });
    });
    tail.forEach(function (c) { tr.appendChild(c); });
  }

  function applyTable(section, g, ref, libs) {
    var table = section.querySelector("table.results");
    if (!table) {
      return;
    }
    var rows = {};
    g.rows.forEach(function (r) { rows[r.transform] = r; });
    each(table.rows, function (tr) {
      reorderCells(tr, libs);
      each(tr.cells, function (c) {
        c.classList.toggle("is-ref", c.getAttribute("data-lib") === ref);
      });
      var row = rows[tr.cells[0].getAttribute("data-value")];
      var cell = tr.querySelector("td.speedup");
      if (row && cell) {
        var s = rowSpeedup(row, ref, libs);
        cell.textContent = speedupText(s);
        cell.setAttribute("data-value", s ? String(s.value) : "");
      }
    });
  }

  function applyFooter(section, g, ref, libs) {
    var body = section.querySelector("table.footer tbody");
    if (!body) {
      return;
    }
    var present = libs.indexOf(ref) >= 0;
    var html = "";
    libs.forEach(function (lib) {
      var count = g.rows.filter(function (r) { return measured(r, lib) !== null; }).length;
      var text;
      if (lib === ref && present) {
        text = "reference";
      } else {
        var rs = present ? g.rows.map(function (r) { return ratio(r, ref, lib); }).filter(Boolean) : [];
        var paired = rs.filter(function (r) { return r.paired; }).length;
        text = rs.length === 0 ? "n/a" : times(median(rs.map(function (r) { return r.value; }))) +
          " over " + rs.length + " rows" + (paired > 0 ? " (" + paired + " paired)" : "");
      }
      html += "<tr data-lib=\"" + esc(lib) + "\"><td>" + esc(lib) + "</td><td>" + count + " / " + g.rows.length +
        "</td><td>" + text + "</td></tr>";
    });
    body.innerHTML = html;
  }

  // Log-scale geometry over the values of a group: whole decades, so grid lines are decades.
  function logScale(values) {
    var lo = Math.pow(10, Math.floor(Math.log10(Math.min.apply(null, values))));
    var hi = Math.pow(10, Math.ceil(Math.log10(Math.max.apply(null, values))));
    if (hi <= lo) {
      hi = lo * 10;
    }
    var decades = Math.round(Math.log10(hi / lo));
    return {
      decades: decades,
      lo: lo,
      pos: function (v) {
        return Math.min(100, Math.max(0.6, 100 * Math.log10(v / lo) / Math.log10(hi / lo)));
      }
    };
  }
  function short(v) {
    return v >= 1e6 ? v / 1e6 + "M" : v >= 1e3 ? v / 1e3 + "k" : String(v);
  }
  function axis(scale, unit) {
    var html = "<div class=\"bar-line axis\"><span class=\"bar-lib\"></span><span class=\"bar-track\">";
    for (var i = 0; i <= scale.decades; i++) {
      html += "<span class=\"tick\" style=\"left:" + (100 * i / scale.decades) + "%\">" +
        short(Number((scale.lo * Math.pow(10, i)).toPrecision(1))) + "</span>";
    }
    return html + "</span><span class=\"bar-val muted\">" + esc(unit) + ", log scale</span></div>";
  }
  function legend(libs, ref) {
    return "<div class=\"swatches\">" + libs.map(function (l) {
      return "<span class=\"swatch" + (l === ref ? " is-ref" : "") + "\"><i style=\"background:" + colour(l) +
        "\"></i>" + esc(l) + (l === ref ? " (reference)" : "") + "</span>";
    }).join("") + "</div>";
  }
  function barLine(lib, ref, width, track, label, cls) {
    return "<div class=\"bar-line" + (lib === ref ? " is-ref" : "") + (cls ? " " + cls : "") + "\" data-lib=\"" +
      esc(lib) + "\"><span class=\"bar-lib\">" + esc(lib) + "</span><span class=\"bar-track\" style=\"" + track +
      "\">" + (width === null ? "" : "<span class=\"bar\" style=\"width:" + width.toFixed(2) + "%;background:" +
      colour(lib) + "\"></span>") + "</span><span class=\"bar-val\">" + label + "</span></div>";
  }

  // Per transform: each library's throughput as a bar on one log scale of the measured values
  // (a slow row's preflight figure is drawn, faded, clamped to the scale; video: also frames/s).
  function drawBars(box, g, ref, libs) {
    var values = [];
    g.rows.forEach(function (r) {
      libs.forEach(function (l) {
        var c = r.cells[l];
        if (c && c.s === "ok" && c.v > 0) {
          values.push(c.v);
        }
      });
    });
    if (values.length === 0) {
      box.innerHTML = "<p class=\"muted\">No measured rows.</p>";
      return;
    }
    var scale = logScale(values);
    var track = "background-size:" + (100 / scale.decades) + "% 100%";
    var html = legend(libs, ref) + axis(scale, g.unit);
    g.rows.forEach(function (r) {
      var s = rowSpeedup(r, ref, libs);
      html += "<div class=\"bar-row\" data-transform=\"" + esc(r.transform) + "\"><div class=\"bar-name\">" +
        esc(r.transform) + (r.transform === g.ceiling ? " <span class=\"tag\">ceiling</span>" : "") +
        (s ? " <span class=\"bar-speedup\">" + esc(ref) + " " + speedupText(s) + " vs fastest other</span>" : "") +
        "</div>";
      libs.forEach(function (l) {
        var c = r.cells[l];
        if (!c || c.s === "missing" || c.s === "unsupported") {
          return;
        }
        if (c.s === "ok") {
          var label = "<b>" + num(c.v) + "</b> " + esc(g.unit);
          if (g.frames_unit && c.f) {
            label += " · <b>" + num(c.f) + "</b> " + esc(g.frames_unit);
          }
          html += barLine(l, ref, scale.pos(c.v), track, label, "");
        } else if (c.s === "slow") {
          html += barLine(l, ref, c.v ? scale.pos(c.v) : null, track, "slow (" + esc(g.slow_label) + ")", "slow");
        } else {
          html += barLine(l, ref, null, track, "error", "error");
        }
      });
      html += "</div>";
    });
    box.innerHTML = html;
  }

  // Pipeline: each library's rows as a share of its own decode ceiling, best share first.
  function drawCeiling(box, g, ref, libs) {
    var html = "<p class=\"muted small\">Each bar: the row's throughput as a share of the same library's <b>" +
      esc(g.ceiling) + "</b> row (decode \u2192 crop \u2192 normalize, no transform), the most its loader " +
      "can deliver. 100% means the transform is free; the line marks it.</p><div class=\"ceiling-grid\">";
    libs.forEach(function (l) {
      var ceil = null;
      var ceilState = "missing";
      var items = [];
      g.rows.forEach(function (r) {
        var c = r.cells[l];
        if (r.transform === g.ceiling) {
          ceil = c && c.s === "ok" ? c.v : null;
          ceilState = c ? c.s : "missing";
        } else if (c && c.s === "ok" && typeof c.share === "number") {
          items.push({ t: r.transform, share: c.share, v: c.v });
        }
      });
      items.sort(function (a, b) { return b.share - a.share || (a.t < b.t ? -1 : 1); });
      html += "<div class=\"ceiling-card" + (l === ref ? " is-ref" : "") + "\" data-lib=\"" + esc(l) +
        "\"><h4><i style=\"background:" + colour(l) + "\"></i>" + esc(l) + "</h4><p class=\"muted small\">" +
        (ceil !== null ? "ceiling " + num(ceil) + " " + esc(g.unit) : "no decode ceiling measured" +
        (ceilState === "slow" ? ": its " + esc(g.ceiling) + " row was slow (" + esc(g.slow_label) + ")" :
          ceilState === "error" ? ": its " + esc(g.ceiling) + " row failed" : "")) + "</p>";
      items.forEach(function (it) {
        var w = Math.min(100, 100 * it.share);
        html += "<div class=\"bar-line share\" data-transform=\"" + esc(it.t) + "\"><span class=\"bar-lib\">" +
          esc(it.t) + "</span><span class=\"bar-track\"><span class=\"bar\" style=\"width:" + w.toFixed(2) +
          "%;background:" + colour(l) + "\"></span></span><span class=\"bar-val\"><b>" +
          Math.round(100 * it.share) + "%</b> · " + num(it.v) + "</span></div>";
      });
      html += "</div>";
    });
    box.innerHTML = html + "</div>";
  }

  // A/B: per pair of variants, each transform's paired ratio current \u00f7 baseline and its 95%
  // confidence interval on one log scale centred on 1, the band of the minimum effect shaded as the
  // verdicts read it (`ab.band`, from Rust), with the texts and verdicts `augbench compare` prints.
  var VERDICT_CLASS = {
    "slower": "slower", "faster": "faster", "no change": "same", "undecided": "undecided", "not comparable": "none"
  };
  function drawAb(box, ab) {
    var m = ab.min_effect;
    var lo = ab.band[0], hi = ab.band[1];
    var span = Math.max(-Math.log(lo), Math.log(hi)) * 2;
    ab.rows.forEach(function (r) {
      if (r.low !== null && r.high !== null) {
        span = Math.max(span, Math.abs(Math.log(r.low)), Math.abs(Math.log(r.high)));
      }
    });
    span *= 1.1;
    var pos = function (x) {
      return Math.min(100, Math.max(0, 50 + 50 * Math.log(x) / span));
    };
    // Ticks by priority (1, the extent, the band's edges, halfway), each kept only where it
    // stands clear of those already placed, so labels never overlap.
    var edge = span / 1.1;
    var ticks = [];
    [1, Math.exp(-edge), Math.exp(edge), lo, hi, Math.exp(-edge / 2), Math.exp(edge / 2)].forEach(function (t) {
      var clear = ticks.every(function (u) { return Math.abs(pos(t) - pos(u)) >= 9; });
      if (clear) {
        ticks.push(t);
      }
    });
    ticks.sort(function (a, b) { return a - b; });
    var axisHtml = ticks.map(function (t) {
      return "<span class=\"tick\" style=\"left:" + pos(t).toFixed(2) + "%\">" + t.toFixed(2) + "</span>";
    }).join("");
    var band = "left:" + pos(lo).toFixed(2) + "%;width:" + (pos(hi) - pos(lo)).toFixed(2) + "%";
    var html = "<p class=\"muted small\">Each row: the paired ratio <b>current \u00f7 baseline</b> (over the worker-" +
      "process pairs both variants ran in; below 1 the current variant is slower), its 95% confidence interval, and the " +
      "verdict at the minimum effect of " + (100 * m).toFixed(0) + "% (the shaded band): <i>no change</i> when " +
      "the interval lies inside the band, <i>slower</i> or <i>faster</i> when it lies outside the band and " +
      "excludes 1, else <i>undecided</i>; as <code>augbench compare</code> reports them. The reference " +
      "switch does not change this view.</p>";
    var pairs = [];
    ab.rows.forEach(function (r) {
      var k = r.current + "\u00f7" + r.baseline;
      if (pairs.indexOf(k) < 0) {
        pairs.push(k);
      }
    });
    pairs.forEach(function (k) {
      var rows = ab.rows.filter(function (r) { return r.current + "\u00f7" + r.baseline === k; });
      html += "<h3 class=\"ab-pair\">" + esc(rows[0].current) + " \u00f7 " + esc(rows[0].baseline) +
        "</h3><table class=\"ab\"><thead><tr><th>Transform</th><th>Ratio</th><th>95% confidence interval</th>" +
        "<th>Rounds</th><th class=\"ab-verdict\">Verdict</th><th class=\"ab-plot\"><span class=\"ab-axis\">" + axisHtml +
        "</span></th></tr></thead><tbody>";
      rows.forEach(function (r) {
        var plot = "";
        if (r.ratio !== null && r.low !== null && r.high !== null) {
          plot = "<span class=\"ab-whisker\" style=\"left:" + pos(r.low).toFixed(2) + "%;width:" +
            (pos(r.high) - pos(r.low)).toFixed(2) + "%\"></span><span class=\"ab-dot\" style=\"left:" +
            pos(r.ratio).toFixed(2) + "%\"></span>";
        }
        html += "<tr class=\"ab-" + (VERDICT_CLASS[r.verdict] || "none") + "\" data-transform=\"" + esc(r.transform) +
          "\"><td>" + esc(r.transform) + "</td><td class=\"ab-ratio\">" + esc(r.ratio_text) +
          "</td><td class=\"ab-interval\">" + esc(r.interval_text) + "</td><td>" + r.rounds +
          "</td><td class=\"ab-verdict\">" + esc(r.verdict_text) + "</td><td class=\"ab-plot\"><span class=\"ab-track\">" +
          "<span class=\"ab-band\" style=\"" + band + "\"></span><span class=\"ab-one\" style=\"left:50%\"></span>" +
          plot + "</span></td></tr>";
      });
      html += "</tbody></table>";
    });
    if (ab.not_measured) {
      html += "<p class=\"muted small ab-not-measured\">" + esc(ab.not_measured) + "</p>";
    }
    box.innerHTML = html + "<p class=\"legend ab-summary\">" + esc(ab.summary) + "</p>";
  }

  function showView(section, view) {
    var tabs = section.querySelectorAll(".tabs button");
    var has = false;
    each(tabs, function (b) { has = has || b.getAttribute("data-view") === view; });
    if (!has) {
      view = "table";
    }
    each(tabs, function (b) {
      b.setAttribute("aria-selected", b.getAttribute("data-view") === view ? "true" : "false");
    });
    each(section.querySelectorAll(".panel"), function (p) {
      p.hidden = p.getAttribute("data-view") !== view;
    });
  }

  function apply(ref) {
    if (data.libraries.indexOf(ref) < 0) {
      ref = data.reference;
    }
    data.groups.forEach(function (g) {
      var section = document.getElementById(g.id);
      if (!section) {
        return;
      }
      var libs = order(g, ref);
      applyTable(section, g, ref, libs);
      applyFooter(section, g, ref, libs);
      each(section.querySelectorAll(".bars, .video-view"), function (b) { drawBars(b, g, ref, libs); });
      each(section.querySelectorAll(".ceiling-view"), function (b) { drawCeiling(b, g, ref, libs); });
      if (g.ab) {
        each(section.querySelectorAll(".ab-view"), function (b) { drawAb(b, g.ab); });
      }
      each(section.querySelectorAll(".chart-ref"), function (p) {
        var drawn = p.getAttribute("data-drawn-for");
        p.classList.toggle("stale", drawn !== ref);
        p.innerHTML = drawn === ref ? "Drawn for reference <b>" + esc(drawn) + "</b>." :
          "Drawn for reference <b>" + esc(drawn) + "</b> when the page was written; the table, footer and " +
          "per-transform view follow <b>" + esc(ref) + "</b>.";
      });
    });
    each(document.querySelectorAll(".ref-name"), function (s) { s.textContent = ref; });
    var select = document.getElementById("ref-select");
    if (select) {
      select.value = ref;
    }
    var why = document.getElementById("ref-why");
    if (why) {
      why.textContent = ref === data.reference ? data.why : "chosen in this page";
    }
    document.body.setAttribute("data-reference", ref);
  }

  var p = params();
  apply(p.ref || data.reference);
  var view = p.view || "table";
  each(document.querySelectorAll("section.group"), function (section) {
    showView(section, view);
    each(section.querySelectorAll(".tabs button"), function (b) {
      b.addEventListener("click", function () { showView(section, b.getAttribute("data-view")); });
    });
  });
  document.body.setAttribute("data-view", view);
  window.addEventListener("hashchange", function () {
    apply(params().ref || data.reference);
  });
  var select = document.getElementById("ref-select");
  if (select) {
    select.addEventListener("change", function () {
      apply(select.value);
      var q = params();
      q.ref = select.value;
      var hash = Object.keys(q).map(function (k) { return k + "=" + encodeURIComponent(q[k]); }).join("&");
      history.replaceState(null, "", "#" + hash);
    });
  }
})();

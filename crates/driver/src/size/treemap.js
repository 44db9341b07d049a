// The treemap of `parec size --html`: the program's own code by module,
// generic and function, coloured by kind. Squarified layout (Bruls,
// Huizing, van Wijk, "Squarified Treemaps", VisSym 2000). The page embeds
// its data as JSON (#size-data); this script draws it into #treemap as
// absolutely positioned boxes, one per module, generic and function, each
// with its name in a `data-name` attribute, a hover title and, when it
// fits, a label. Clicking a box shows its details in #details.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("size-data").textContent);
  var HEADER = 16; // px of a group's title strip
  var PAD = 2; // px between a group's border and its children

  function fmt(n) {
    return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }

  // The tree: modules -> generics -> functions; plain functions sit
  // directly in their module.
  function buildTree() {
    var modules = {};
    data.functions.forEach(function (f) {
      var m = modules[f.module] || (modules[f.module] = { name: f.module, level: "module", children: [], generics: {} });
      if (f.generic) {
        var g = m.generics[f.generic];
        if (!g) {
          g = m.generics[f.generic] = { name: f.generic, level: "generic", children: [] };
          m.children.push(g);
        }
        g.children.push({ name: f.name, level: "function", fn: f, value: f.share });
      } else {
        m.children.push({ name: f.name, level: "function", fn: f, value: f.share });
      }
    });
    var roots = Object.keys(modules).map(function (k) { return modules[k]; });
    function total(node) {
      if (node.children) {
        node.value = node.children.reduce(function (s, c) { return s + total(c); }, 0);
      }
      return node.value;
    }
    var root = { name: "own code", level: "root", children: roots };
    total(root);
    return root;
  }

  // Worst aspect ratio of a row of areas laid along a side of length `side`.
  function worst(row, side) {
    var sum = 0, max = 0, min = Infinity;
    row.forEach(function (a) { sum += a; max = Math.max(max, a); min = Math.min(min, a); });
    var s2 = side * side, sum2 = sum * sum;
    return Math.max((s2 * max) / sum2, sum2 / (s2 * min));
  }

  // Squarified layout of `nodes` (sorted by value, largest first) in the
  // rectangle; sets node.x, y, w, h.
  function squarify(nodes, x, y, w, h) {
    var total = nodes.reduce(function (s, n) { return s + n.value; }, 0);
    if (total <= 0 || w <= 0 || h <= 0) {
      nodes.forEach(function (n) { n.x = x; n.y = y; n.w = 0; n.h = 0; });
      return;
    }
    var scale = (w * h) / total;
    var areas = nodes.map(function (n) { return n.value * scale; });
    var i = 0;
    while (i < nodes.length) {
      var side = Math.min(w, h);
      var row = [areas[i]];
      var j = i + 1;
      while (j < nodes.length && worst(row.concat([areas[j]]), side) <= worst(row, side)) {
        row.push(areas[j]);
        j++;
      }
      var rowArea = row.reduce(function (s, a) { return s + a; }, 0);
      var thick = rowArea / side;
      var offset = 0;
      for (var k = i; k < j; k++) {
        var len = areas[k] / thick;
        if (w >= h) {
          nodes[k].x = x; nodes[k].y = y + offset; nodes[k].w = thick; nodes[k].h = len;
        } else {
          nodes[k].x = x + offset; nodes[k].y = y; nodes[k].w = len; nodes[k].h = thick;
        }
        offset += len;
      }
      if (w >= h) { x += thick; w -= thick; } else { y += thick; h -= thick; }
      i = j;
    }
  }

  function layout(node) {
    if (!node.children) return;
    node.children.sort(function (a, b) { return b.value - a.value || (a.name < b.name ? -1 : 1); });
    var top = node.level === "root" ? 0 : HEADER;
    var pad = node.level === "root" ? 0 : PAD;
    squarify(node.children, node.x + pad, node.y + top, node.w - 2 * pad, node.h - top - pad);
    node.children.forEach(layout);
  }

  var details = document.getElementById("details");
  function describe(node) {
    var lines = [node.level + ": " + node.name];
    if (node.fn) {
      var f = node.fn;
      lines.push("module: " + f.module, "kind: " + f.kind, "bytes: " + fmt(f.bytes));
      if (f.generic) lines.push("generic: " + f.generic);
      if (f.shared_with > 0) lines.push("shared with " + f.shared_with + " (drawn: " + fmt(f.share) + " bytes)");
      if (f.copies > 1) lines.push(f.copies + " copies");
      if (f.trap_bytes > 0) lines.push("trap stubs: " + fmt(f.trap_bytes) + " bytes");
    } else {
      lines.push("bytes: " + fmt(node.value));
    }
    return lines.join("\n");
  }

  function draw(node, parent) {
    if (node.level === "root") {
      node.children.forEach(function (c) { draw(c, parent); });
      return;
    }
    if (node.w < 1 || node.h < 1) return;
    var box = document.createElement("div");
    box.className = "node " + (node.fn ? "fn kind-" + node.fn.kind : node.level);
    box.setAttribute("data-name", node.name);
    box.style.left = node.x + "px";
    box.style.top = node.y + "px";
    box.style.width = node.w + "px";
    box.style.height = node.h + "px";
    box.title = describe(node);
    if (node.fn && node.fn.trap_bytes > 0 && node.fn.kind !== "trap-path") {
      var trap = document.createElement("div");
      trap.className = "trap";
      trap.style.height = Math.max(1, (node.h * node.fn.trap_bytes) / node.fn.bytes) + "px";
      box.appendChild(trap);
    }
    var room = node.fn ? node.h >= 14 && node.w >= 40 : node.w >= 30;
    if (room) {
      var label = document.createElement("span");
      label.className = "label";
      label.textContent = node.name;
      box.appendChild(label);
    }
    box.addEventListener("click", function (event) {
      event.stopPropagation();
      details.textContent = describe(node);
    });
    parent.appendChild(box);
    if (node.children) node.children.forEach(function (c) { draw(c, parent); });
  }

  var map = document.getElementById("treemap");
  var root = buildTree();

  // Lays the tree out in the map's current size and draws it (again).
  function render() {
    while (map.firstChild) map.removeChild(map.firstChild);
    root.x = 0;
    root.y = 0;
    root.w = map.clientWidth;
    root.h = map.clientHeight;
    layout(root);
    draw(root, map);
    map.setAttribute("data-drawn", String(map.querySelectorAll(".node.fn").length));
  }

  var drawnSize = "";
  function renderIfResized() {
    var size = map.clientWidth + "x" + map.clientHeight;
    if (size !== drawnSize) {
      drawnSize = size;
      render();
    }
  }
  renderIfResized();
  window.addEventListener("resize", renderIfResized);
})();

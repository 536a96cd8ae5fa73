"""Inline CSS and JavaScript of the HTML report (no external resources)."""

from __future__ import annotations

REPORT_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#1a1a1a;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:2px solid #0072B2;padding-bottom:.2em;margin-top:2em}
h3{margin-bottom:.3em}nav a{font-size:.9em}
table{border-collapse:collapse;margin:.6em 0;font-size:.85em}th,td{padding:.25em .6em;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
th{border-bottom:2px solid #555}td.num{text-align:right;font-variant-numeric:tabular-nums}
.ci{color:#666;font-size:.85em;white-space:nowrap}.muted{color:#666}.diff.better{background:#d9f0e3}.diff.worse{background:#fbe3d6}
figure{margin:1em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}figcaption{font-size:.85em;color:#444}
pre{background:#f6f8fa;padding:.8em;overflow:auto;font-size:.8em;max-height:28em}
.sensitive{filter:blur(5px);cursor:pointer;transition:filter .15s;user-select:none}
.sensitive.revealed{filter:none;user-select:text}
.example{border:1px solid #ddd;border-radius:6px;padding:.6em .9em;margin:.6em 0}
.label{font-family:monospace;background:#eef;padding:0 .3em;border-radius:3px}
.warn{background:#fff3cd;padding:.5em .8em;border-left:4px solid #E69F00}
.table-wrap{overflow-x:auto;max-width:100%;margin:.6em 0}.table-wrap table{margin:0}
dl.kv{margin:0;display:grid;grid-template-columns:max-content minmax(8em,1fr);column-gap:.6em;row-gap:.1em}
dl.kv dt{color:#555;font-family:monospace;font-size:.95em}dl.kv dd{margin:0;overflow-wrap:anywhere}
.caveats{background:#fff3cd;border-left:6px solid #D55E00;padding:.4em 1em;margin:1em 0}
.caveats h2{border:none;margin:.3em 0;padding:0;font-size:1.2em}.caveats ul{margin:.3em 0;padding-left:1.2em}
.caveats li{margin:.25em 0}.caveats li.severe{font-weight:600}
nav{display:flex;flex-wrap:wrap;gap:.2em .8em}nav a{margin:0}
.caveats li.more{list-style:none;margin-left:-1em}.caveats li details summary{cursor:pointer}.caveats li details p{margin:.2em 0 .4em;font-weight:400}
figure{overflow-x:auto}
#verdict{margin-top:.6em}#verdict h2{margin-top:.4em}p.how{font-size:.85em;color:#444;margin:.3em 0}
table.verdict{font-size:.9em}table.verdict td{font-variant-numeric:tabular-nums}
.verdict.biased{color:#A3370B;font-weight:700}.verdict.unbiased{color:#00603F;font-weight:600}
ul.slices{margin:0;padding-left:1em;font-size:.92em}.model-key{overflow-wrap:normal;word-break:keep-all}
a.measure{color:inherit;text-decoration:underline dotted}#provenance td+td{overflow-wrap:anywhere}
details.provenance>summary{cursor:pointer;font-size:1.5em;font-weight:700;border-bottom:2px solid #0072B2;padding-bottom:.2em}
@media (max-width:700px){body{margin:1em auto;padding:0 .6em}figure img{max-width:none}h1{font-size:1.3em}
figure picture.phone img{width:100%!important;max-width:100%}
table.verdict,table.verdict tbody,table.verdict tr,table.verdict td,table.stack,table.stack tbody,table.stack tr,table.stack td{display:block;width:auto}
table.verdict thead,table.stack thead{display:none}
table.verdict tr,table.stack tr{border:1px solid #ccc;border-radius:6px;margin:.4em 0;padding:.2em .4em}
table.verdict td,table.stack td{border:none;padding:.1em 0;text-align:left}
table.verdict td[data-label]::before,table.stack td[data-label]::before{content:attr(data-label) ": ";color:#555;font-size:.9em}
table.stack td[data-label=""]::before{content:none}
table.verdict td:first-child::before{content:none}table.verdict td:first-child{font-weight:700}
.table-wrap table:not(.verdict):not(.stack) td:first-child{position:sticky;left:0;background:#fff;max-width:7.5em}
.caveats{padding:.3em .7em}.caveats h2{font-size:1.05em}}
"""
REPORT_JS = """
document.querySelectorAll('.sensitive').forEach(function(el){
  function toggle(){el.classList.toggle('revealed');}
  el.addEventListener('click',toggle);
  el.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){e.preventDefault();toggle();}});
});
var all=document.getElementById('reveal-all');
if(all){all.addEventListener('click',function(){
  document.querySelectorAll('.sensitive').forEach(function(el){el.classList.add('revealed');});});}
"""

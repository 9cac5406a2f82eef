// The finance console's one script: draws the overview charts from the JSON the page carries in
// <script type="application/json" id="chart-data"> (data, not code; the CSP allows only scripts
// served from /console/assets). Every figure is also on the page as text.
(function () {
  'use strict';
  var el = document.getElementById('chart-data');
  if (!el || typeof Chart === 'undefined') return;
  var data = JSON.parse(el.textContent);
  var money = function (v) { return Number(v).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 }); };
  var common = { responsive: true, maintainAspectRatio: false, animation: false };
  var COLORS = ['#2f5bd3', '#067647', '#d08c00', '#b42318', '#7a3ee0', '#0e7490'];

  new Chart(document.getElementById('chart-mrr'), {
    type: 'bar',
    data: {
      labels: data.mrr.labels,
      datasets: [
        { label: 'New', data: data.mrr.new, backgroundColor: '#067647', stack: 'm' },
        { label: 'Expansion', data: data.mrr.expansion, backgroundColor: '#2f5bd3', stack: 'm' },
        { label: 'Contraction', data: data.mrr.contraction, backgroundColor: '#d08c00', stack: 'm' },
        { label: 'Churned', data: data.mrr.churned, backgroundColor: '#b42318', stack: 'm' },
        { label: 'MRR', data: data.mrr.mrr, type: 'line', borderColor: '#1d2330', backgroundColor: '#1d2330', yAxisID: 'y' }
      ]
    },
    options: Object.assign({}, common, { scales: { x: { stacked: true }, y: { stacked: true, ticks: { callback: money } } } })
  });

  new Chart(document.getElementById('chart-aging'), {
    type: 'bar',
    data: { labels: data.aging.labels, datasets: [{ label: 'Balance (USD)', data: data.aging.amounts, backgroundColor: ['#067647', '#d08c00', '#e36414', '#b42318', '#7a1a12'] }] },
    options: Object.assign({}, common, { plugins: { legend: { display: false } }, scales: { y: { ticks: { callback: money } } } })
  });

  new Chart(document.getElementById('chart-collections'), {
    type: 'bar',
    data: {
      labels: data.collections.labels,
      datasets: data.collections.currencies.map(function (c, i) { return { label: c.currency + ' (USD)', data: c.usd, backgroundColor: COLORS[i % COLORS.length], stack: 'c' }; })
    },
    options: Object.assign({}, common, { scales: { x: { stacked: true }, y: { stacked: true, ticks: { callback: money } } } })
  });
  document.body.setAttribute('data-charts', 'drawn');
})();

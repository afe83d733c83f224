// Render the math that pymdownx.arithmatex (generic mode) leaves as \( \) and \[ \]
// with the vendored KaTeX (docs/javascripts/katex/), on every page Material loads,
// including pages reached through instant navigation.
document$.subscribe(({ body }) => {
  renderMathInElement(body, {
    delimiters: [
      { left: "$$", right: "$$", display: true },
      { left: "$", right: "$", display: false },
      { left: "\\(", right: "\\)", display: false },
      { left: "\\[", right: "\\]", display: true },
    ],
    throwOnError: false,
  });
});

() => {
  // Show the marked sentence of an evidence popover, which may sit deep in a long abstract;
  // on click (focus) also scroll the chat so that a popover near its bottom is not cut off.
  const reveal = (cite, scrollChat) => {
    const popover = cite.querySelector(".cq-pop");
    const abstract = popover?.querySelector(".cq-abstract");
    const mark = abstract?.querySelector("mark");
    if (!popover) return;
    if (mark) abstract.scrollTop = mark.offsetTop - abstract.clientHeight / 3;
    if (scrollChat) popover.scrollIntoView({ block: "nearest" });
  };
  document.addEventListener("focusin", (event) => {
    if (event.target.matches?.(".cq-cite")) reveal(event.target, true);
  });
  document.addEventListener("mouseover", (event) => {
    const cite = event.target.closest?.(".cq-chip")?.closest(".cq-cite");
    if (cite) reveal(cite, false);
  });
}

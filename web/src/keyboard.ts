// Keys for the list: j / ArrowDown and k / ArrowUp move through it, Enter
// opens (a focused row is a link), Escape closes the detail (or leaves the
// search box being typed in), / finds by id.

export interface KeyActions {
  move(delta: number): void;
  /** Enter pressed while no row has focus. */
  openCurrent(): void;
  close(): void;
  focusFind(): void;
}

function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

/** Listens on `document`; returns the function that stops listening. */
export function bindListKeys(actions: KeyActions): () => void {
  const onKey = (event: KeyboardEvent): void => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (isTyping(event.target)) {
      // Escape leaves a search box (Find, a filter), so that the list's keys work again.
      if (event.key === 'Escape' && event.target instanceof HTMLInputElement && event.target.type === 'search') {
        event.target.blur();
      }
      return;
    }
    const onRow = event.target instanceof HTMLAnchorElement && event.target.classList.contains('row');
    const onControl = !onRow && event.target instanceof HTMLElement && ['BUTTON', 'A', 'SUMMARY'].includes(event.target.tagName);
    switch (event.key) {
      case 'ArrowDown':
      case 'ArrowUp':
        // Arrows scroll the page everywhere but on the list itself.
        if (!onRow && event.target !== document.body) return;
        actions.move(event.key === 'ArrowDown' ? 1 : -1);
        break;
      case 'j':
      case 'k':
        actions.move(event.key === 'j' ? 1 : -1);
        break;
      case 'Enter':
        if (onRow || onControl) return; // the browser follows the link or presses the button
        actions.openCurrent();
        break;
      case 'Escape':
        actions.close();
        break;
      case '/':
        actions.focusFind();
        break;
      default:
        return;
    }
    event.preventDefault();
  };
  document.addEventListener('keydown', onKey);
  return () => document.removeEventListener('keydown', onKey);
}

// Part B's views, each loaded on first use (a dynamic import, a separate chunk with esbuild's
// splitting): the BSON decoder, the charts and the forms stay out of the first view's JavaScript.
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { CloudView, ViewProps } from './views.js';

type ViewComponent = (props: ViewProps) => JSX.Element;

export function lazyView(id: string, title: string, load: () => Promise<ViewComponent>): CloudView {
  let loaded: ViewComponent | undefined;
  function Lazy(props: ViewProps) {
    const [View, setView] = useState<ViewComponent | undefined>(() => loaded);
    useEffect(() => {
      if (View) return;
      load().then((v) => {
        loaded = v;
        setView(() => v);
      }, props.showError);
    }, []);
    return View ? <View {...props} /> : <p class="muted">Loading {title}…</p>;
  }
  return { id, title, render: (props) => <Lazy {...props} /> };
}

export const sqlView = lazyView('sql', 'SQL', () => import('./query/console-view.js').then((m) => m.SqlView));
export const mqlView = lazyView('mql', 'MQL', () => import('./query/console-view.js').then((m) => m.MqlView));
export const tabularView = lazyView('tabular', 'Tabular data', () => import('./query/tabular-view.js').then((m) => m.TabularView));
export const trainingView = lazyView('training', 'Training', () => import('./training/training-view.js').then((m) => m.TrainingView));
export const machinesView = lazyView('machines', 'Machines', () => import('./machines/machines-view.js').then((m) => m.MachinesView));

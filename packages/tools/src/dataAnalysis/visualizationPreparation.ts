// visualization_preparation: python_execute under another name, for the step that writes the
// chart list data_visualization reads (OpenManus's VisualizationPrepare).
import { createPythonExecute, type PythonExecuteOptions, type Tool } from '@openmanus/core';

const DESCRIPTION = [
  'Runs Python (as python_execute does) to prepare charts: write one CSV file per chart with exactly the rows and',
  'columns to draw, then a JSON file listing the charts, and print that JSON file’s path.',
  'The JSON is a list: [{"csvFilePath": "<path of the CSV>", "chartTitle": "<title>"}], and each entry may add',
  '"chartType" (bar | line | area | point | pie), "x", "y" and "color" (column names), or instead "spec" (a Vega-Lite',
  'spec without data), and "insights" (a list of findings in words).',
  'Then call data_visualization with the JSON file’s path.',
].join(' ');

export function createVisualizationPreparation(options: PythonExecuteOptions): Tool {
  const python = createPythonExecute(options);
  return { ...python, spec: { ...python.spec, name: 'visualization_preparation', description: DESCRIPTION } };
}

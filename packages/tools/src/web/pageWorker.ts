// The worker thread that reads one page (see pageReading.ts).
import { pageText, parseHtml } from './html.js';
import { pageMarkdown } from './markdown.js';
import type { PageJob } from './pageReading.js';
import { answerJobs } from './workerJob.js';

answerJobs(async (job: PageJob) =>
  job.kind === 'markdown' ? pageMarkdown(job.html, job.url) : pageText(await parseHtml(job.html)),
);

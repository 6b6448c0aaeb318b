"""The progress bar of Translator.translate_file(progress=True): one line on
standard error, rewritten at most a few times a second."""
import sys
import time


class TextBar:
    def __init__(self, stream=None, width=30):
        self.stream = stream or sys.stderr
        self.width = width
        self.start = time.monotonic()
        self.shown = 0.0

    def __call__(self, done, total):
        now = time.monotonic()
        if done < total and now - self.shown < 0.2:
            return
        self.shown = now
        filled = self.width * done // max(total, 1)
        rate = done / max(now - self.start, 1e-9)
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} "
                          f"sentences, {rate:.1f}/s")
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()

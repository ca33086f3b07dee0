# torch/__init__.py of a fake torch whose import never finishes (a stuck driver call).
import time

time.sleep(600)

"""What each page's notes point out, computed from core's arrays: one module per page, named
after the page's id (``core.findings.softmax`` for /softmax, ``core.findings.flash`` for
/flash, …).

A findings module holds what a page's words are made from: small frozen dataclasses of facts
(the largest probability, what a mask leaves, where the naive formula breaks) and the small
functions that read them off arrays, with the thresholds they use. The page's view
(``ui/views/<id>.py``) turns each finding into a translated sentence, so the findings can be
tested without a browser. The maths itself (an attention variant, a tiled softmax, a
rotation, an experiment) lives in the concept modules of :mod:`core`; they never import a
findings module. A page whose notes state nothing computed has no module here.
"""

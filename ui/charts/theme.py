"""The house look of every chart: font, colours and the Vega-Lite ``config``
(:func:`theme_config`; larger type on a projector)."""

# The app's own font first ("Source Sans", served by Streamlit with the page): chart text
# then matches the page around it. Chinese characters fall through to a CJK font. (With a
# CJK font first, Latin titles took its full-width “ ” quotes: a gap like two spaces.)
FONT = "Source Sans, Source Sans Pro, Noto Sans CJK SC, Noto Sans SC, Microsoft YaHei, sans-serif"
QUERY_COLOR = "#d1495b"
KEY_COLOR = "#00798c"
VALUE_COLOR = "#2e7d32"
ACCENT = "#edae49"
MASKED = "#d9d9d9"  # a cell without a value: masked (−∞) or not there
FRAME = "#111111"  # the frame around a highlighted row


def theme_config(presenter: bool) -> dict:
    """The house Vega-Lite ``config``: fonts, sizes (larger in presenter mode: >= 18 px on a
    1920 px projector), white background so dark labels stay legible when the app is
    switched to a dark theme. Y-axis titles are horizontal, above the axis: Chinese titles
    turned on their side are hard to read."""
    label, heading = (19, 23) if presenter else (12, 15)
    return {
        "font": FONT,
        "background": "#ffffff",
        "padding": 8,
        "axis": {"labelFontSize": label, "titleFontSize": label + 1, "labelLimit": 220},
        "axisY": {
            "titleAngle": 0,
            "titleAlign": "left",
            "titleAnchor": "end",
            "titleBaseline": "bottom",
            "titleX": 0,
            "titleY": -8,
        },
        "legend": {
            "labelFontSize": label,
            "titleFontSize": label,
            "labelLimit": 400,
            "symbolSize": 180 if presenter else 100,
        },
        "header": {
            "labelFontSize": label + 1,
            "titleFontSize": label + 1,
            "labelFont": FONT,
            "titleFont": FONT,
        },
        "title": {"fontSize": heading, "subtitleFontSize": label, "anchor": "start"},
        "text": {"fontSize": label},
        "view": {"strokeWidth": 0},
    }

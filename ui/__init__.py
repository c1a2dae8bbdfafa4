"""Streamlit-facing helpers: shell, i18n, params, charts, exports, presenter steps."""

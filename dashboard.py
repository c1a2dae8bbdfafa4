import streamlit as st

st.title("Attention Lab")
st.write("Scaled dot-product self-attention, one idea at a time.")
